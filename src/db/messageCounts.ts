import { sql } from 'kysely';
import type { Db } from './database.ts';
import { dialectOf, statement } from './prepared.ts';
import type { MessageCountsTable } from './tables.ts';

// Analytics counters: per project, UTC hour, status, template and language, how many messages
// reached the status (QUEUED: were accepted). Written in the transactions that accept messages
// and record status changes, one aggregated upsert per batch; read a page of buckets at a time,
// at most one row per hour and key, whatever the project's size.

export const HOUR_MS = 3_600_000;

export type MessageCountRow = MessageCountsTable;

/** What one message is counted under. */
export interface CountedMessage {
  id: string;
  project_id: string;
  template_name: string;
  language: string;
}

type Key = Omit<MessageCountRow, 'count'>;

/** Adds up counts of the same (project, hour, status, template, language), in key order. */
function aggregate(items: Iterable<Key>): MessageCountRow[] {
  const byKey = new Map<string, MessageCountRow>();
  for (const item of items) {
    const key = JSON.stringify([item.project_id, item.hour, item.status, item.template, item.language]);
    const row = byKey.get(key);
    if (row) row.count++;
    else byKey.set(key, { ...item, count: 1 });
  }
  // The same order in every transaction: two upserting the same rows never wait in a cycle.
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

const ADD_COUNT_SQLITE = statement(
  `insert into message_counts (project_id, hour, status, template, language, count) values (?, ?, ?, ?, ?, ?)
   on conflict (project_id, hour, status, template, language) do update set count = message_counts.count + excluded.count`,
);

async function addCounts(trx: Db, rows: readonly MessageCountRow[]): Promise<void> {
  if (dialectOf(trx) === 'sqlite') {
    for (const row of rows) await ADD_COUNT_SQLITE.execute(trx, [row.project_id, row.hour, row.status, row.template, row.language, row.count]);
    return;
  }
  for (let i = 0; i < rows.length; i += 500) {
    await trx
      .insertInto('message_counts')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) =>
        oc
          .columns(['project_id', 'hour', 'status', 'template', 'language'])
          .doUpdateSet({ count: sql`message_counts.count + excluded.count` }),
      )
      .execute();
  }
}

/**
 * PostgreSQL: an insert that counts the rows of `source` (a query or CTE with project_id,
 * queued_at, template_name and language) as accepted, for a statement that inserts messages and
 * counts them in one round trip (messages.ts, insertAcceptedMessages). Rows are locked in key
 * order, as every accept's are, so two processes' accepts never wait on each other in a cycle.
 */
export function countAcceptedSql(source: string): string {
  return `insert into message_counts as c (project_id, hour, status, template, language, count)
    select project_id, queued_at - queued_at % ${HOUR_MS}, 'QUEUED', template_name, language, count(*) from ${source}
    group by project_id, queued_at - queued_at % ${HOUR_MS}, template_name, language
    order by 1, 2, 4, 5
    on conflict (project_id, hour, status, template, language) do update set count = c.count + excluded.count`;
}

/** Counts accepted messages (QUEUED, at their queued_at), in the accept's transaction. */
export async function countAcceptedMessages(
  trx: Db,
  messages: readonly (CountedMessage & { queued_at: number })[],
): Promise<void> {
  if (messages.length === 0) return;
  await addCounts(
    trx,
    aggregate(
      messages.map((message) => ({
        project_id: message.project_id,
        hour: message.queued_at - (message.queued_at % HOUR_MS),
        status: 'QUEUED',
        template: message.template_name,
        language: message.language,
      })),
    ),
  );
}

/**
 * Counts recorded status changes (each at the hour it occurred), in their transaction. QUEUED
 * events are not counted here: a message is counted QUEUED once, when it is accepted.
 */
export async function countStatusChanges(
  trx: Db,
  events: readonly { message_id: string; status: string; occurred_at: number }[],
  messages: readonly CountedMessage[],
): Promise<void> {
  const byId = new Map(messages.map((message) => [message.id, message]));
  const keys: Key[] = [];
  for (const event of events) {
    const message = byId.get(event.message_id);
    if (!message || event.status === 'QUEUED') continue;
    keys.push({
      project_id: message.project_id,
      hour: event.occurred_at - (event.occurred_at % HOUR_MS),
      status: event.status,
      template: message.template_name,
      language: message.language,
    });
  }
  if (keys.length > 0) await addCounts(trx, aggregate(keys));
}

export type CountDimension = 'status' | 'template' | 'language';

export interface HourCount {
  hour: number;
  key: string;
  count: number;
}

/**
 * The project's counts per hour in [from, to) (hour starts), by one dimension. By template or
 * language only accepted messages are counted (QUEUED rows).
 */
export async function readHourlyCounts(
  db: Db,
  projectId: string,
  range: { from: number; to: number; by: CountDimension },
): Promise<HourCount[]> {
  const column = sql.ref(range.by);
  const acceptedOnly = range.by === 'status' ? sql`` : sql`and status = 'QUEUED'`;
  const result = await sql<{ hour: number | string; key: string; count: number | string }>`
    select hour, ${column} as key, sum(count) as count from message_counts
    where project_id = ${projectId} and hour >= ${range.from} and hour < ${range.to} ${acceptedOnly}
    group by hour, ${column}`.execute(db);
  return result.rows.map((row) => ({ hour: Number(row.hour), key: row.key, count: Number(row.count) }));
}
