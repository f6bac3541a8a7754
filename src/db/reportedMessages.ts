import type { Db } from './database.ts';
import type { MessageRow } from './messages.ts';
import { dialectOf, postgresStatement, statement } from './prepared.ts';

/** How a provider's report names its message: our id when it carries it, else the provider's. */
export interface ReportTarget {
  messageId?: string;
  providerMessageId: string;
}

const BY_ID_SQLITE = statement<MessageRow>('select * from messages where id = ?');
const BY_PROVIDER_ID_SQLITE = statement<MessageRow>('select * from messages where provider_message_id = ?');
const LOCK_POSTGRES = postgresStatement<MessageRow>(
  'select * from messages where id = any($1::text[]) or provider_message_id = any($2::text[]) order by id for update',
);

/**
 * The messages these reports are about, as they are now, locked (PostgreSQL: in id order, as the
 * dispatcher's outcome recorder locks them, so the two never deadlock) for the caller's
 * transaction. One statement for any number of reports on PostgreSQL.
 */
export async function lockReportedMessages(
  db: Db,
  targets: readonly ReportTarget[],
): Promise<{ byId: Map<string, MessageRow>; byProviderId: Map<string, MessageRow> }> {
  const dialect = dialectOf(db);
  const ids = [...new Set(targets.flatMap((target) => (target.messageId === undefined ? [] : [target.messageId])))];
  const providerIds = [
    ...new Set(targets.flatMap((target) => (target.messageId === undefined ? [target.providerMessageId] : []))),
  ];
  const rows =
    dialect === 'postgres'
      ? await LOCK_POSTGRES.rows(db, [ids, providerIds])
      : [
          ...(await Promise.all(ids.map((id) => BY_ID_SQLITE.rows(db, [id])))).flat(),
          ...(await Promise.all(providerIds.map((id) => BY_PROVIDER_ID_SQLITE.rows(db, [id])))).flat(),
        ];
  const byId = new Map(rows.map((row) => [row.id, row]));
  const byProviderId = new Map(rows.flatMap((row) => (row.provider_message_id === null ? [] : [[row.provider_message_id, row] as const])));
  return { byId, byProviderId };
}
