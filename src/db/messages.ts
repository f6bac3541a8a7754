import { sql } from 'kysely';
import type { Db, DialectName } from './database.ts';
import type { MessageEventsTable, MessagesTable, MessageStatus, TemplatesTable } from './tables.ts';
import { idLowerBound, newId } from '../domain/ids.ts';

export type MessageRow = MessagesTable;
export type MessageEventRow = MessageEventsTable;

export interface NewMessage {
  projectId: string;
  to: string;
  template: Pick<TemplatesTable, 'id' | 'name' | 'language' | 'category'>;
  variables: Record<string, string>;
  headerVariables?: Record<string, string>;
  /** What the recipient reads. */
  content: { header?: string; body: string; footer?: string };
}

/** The row of a message just accepted: QUEUED and due now. */
export function queuedMessageRow(message: NewMessage, now: number): MessageRow {
  return {
    id: newId('msg', now),
    project_id: message.projectId,
    recipient: message.to,
    template_id: message.template.id,
    template_name: message.template.name,
    language: message.template.language,
    category: message.template.category,
    variables: JSON.stringify(message.variables),
    header_variables: message.headerVariables ? JSON.stringify(message.headerVariables) : null,
    rendered: JSON.stringify(message.content),
    status: 'QUEUED',
    attempts: 0,
    due_at: now,
    lease_expires_at: null,
    provider_message_id: null,
    error: null,
    queued_at: now,
    sent_at: null,
    delivered_at: null,
    read_at: null,
    failed_at: null,
    updated_at: now,
  };
}

export async function insertMessages(db: Db, rows: MessageRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('messages').values(rows).execute();
}

export async function insertMessageEvents(db: Db, rows: MessageEventRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('message_events').values(rows).execute();
}

export async function findMessage(db: Db, projectId: string, id: string): Promise<MessageRow | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * The message a provider report is about — by our id when the provider echoes it, else by the
 * provider's id — locked (PostgreSQL) so concurrent reports apply one after the other.
 */
export async function findMessageForReport(
  db: Db,
  dialect: DialectName,
  by: { messageId?: string; providerMessageId: string },
): Promise<MessageRow | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .$if(by.messageId !== undefined, (query) => query.where('id', '=', by.messageId!))
    .$if(by.messageId === undefined, (query) => query.where('provider_message_id', '=', by.providerMessageId))
    .$if(dialect === 'postgres', (query) => query.forUpdate())
    .executeTakeFirst();
}

/** These messages as they are now, locked (PostgreSQL) for the caller's transaction. */
export async function lockMessages(db: Db, dialect: DialectName, ids: string[]): Promise<Map<string, MessageRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('messages')
    .selectAll()
    .where('id', 'in', ids)
    .orderBy('id')
    .$if(dialect === 'postgres', (query) => query.forUpdate())
    .execute();
  return new Map(rows.map((row) => [row.id, row]));
}

export type MessageChanges = Partial<Omit<MessageRow, 'id' | 'project_id'>>;

export async function updateMessage(db: Db, id: string, changes: MessageChanges): Promise<void> {
  await db.updateTable('messages').set(changes).where('id', '=', id).execute();
}

// PostgreSQL types of the columns a worker changes, for updating many rows in one statement.
const CHANGEABLE_TYPES: Record<string, string> = {
  status: 'text',
  attempts: 'int',
  due_at: 'bigint',
  lease_expires_at: 'bigint',
  provider_message_id: 'text',
  error: 'text',
  sent_at: 'bigint',
  delivered_at: 'bigint',
  read_at: 'bigint',
  failed_at: 'bigint',
  updated_at: 'bigint',
};

/**
 * Applies each message's own changes. On PostgreSQL the rows that change the same columns are
 * updated in one statement (one round trip however many rows); SQLite runs in-process, where a
 * prepared statement per row costs microseconds.
 */
export async function updateMessages(
  db: Db,
  dialect: DialectName,
  updates: readonly { id: string; changes: MessageChanges }[],
): Promise<void> {
  if (dialect === 'sqlite') {
    for (const { id, changes } of updates) await updateMessage(db, id, changes);
    return;
  }
  const byShape = new Map<string, { id: string; changes: MessageChanges }[]>();
  for (const update of updates) {
    const shape = Object.keys(update.changes).sort().join(',');
    byShape.set(shape, [...(byShape.get(shape) ?? []), update]);
  }
  for (const [shape, group] of byShape) {
    if (shape === '') continue;
    const columns = shape.split(',');
    for (const column of columns) {
      if (!(column in CHANGEABLE_TYPES)) throw new Error(`updateMessages cannot set ${column}`);
    }
    const arrays = columns.map(
      (column) =>
        sql`${group.map((update) => (update.changes as Record<string, unknown>)[column] ?? null)}::${sql.raw(CHANGEABLE_TYPES[column]!)}[]`,
    );
    await sql`
      update messages set ${sql.join(
        columns.map((column) => sql`${sql.ref(column)} = v.${sql.ref(column)}`),
      )}
      from unnest(${group.map((update) => update.id)}::text[], ${sql.join(arrays)}) as v(id, ${sql.join(
        columns.map((column) => sql.ref(column)),
      )})
      where messages.id = v.id`.execute(db);
  }
}

export interface MessageFilter {
  status?: MessageStatus;
  to?: string;
  template?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
}

/**
 * A page of the project's messages, newest first: `limit + 1` rows after the cursor. Ids sort by
 * queue time, so the time filters become id bounds and every filter walks one index range.
 */
export async function listMessages(
  db: Db,
  projectId: string,
  filter: MessageFilter,
  page: { limit: number; beforeId?: string },
): Promise<MessageRow[]> {
  let query = db.selectFrom('messages').selectAll().where('project_id', '=', projectId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.to) query = query.where('recipient', '=', filter.to);
  if (filter.template) query = query.where('template_name', '=', filter.template);
  if (filter.since !== undefined) query = query.where('id', '>=', idLowerBound('msg', filter.since));
  if (filter.until !== undefined) query = query.where('id', '<', idLowerBound('msg', filter.until));
  if (page.beforeId) query = query.where('id', '<', page.beforeId);
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

export async function listMessageEvents(db: Db, projectId: string, messageId: string): Promise<MessageEventRow[]> {
  return db
    .selectFrom('message_events')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('message_id', '=', messageId)
    .orderBy('id')
    .execute();
}

export interface SendContext {
  /** Whether the project has saved both provider credentials. */
  providerConfigured: boolean;
  /** Every language of the named template. */
  templates: TemplatesTable[];
}

/**
 * What a send needs to know, in one indexed query: whether the project can send, and the
 * templates of that name. Undefined when the project does not exist.
 */
export async function findSendContext(db: Db, projectId: string, templateName: string): Promise<SendContext | undefined> {
  const rows = await db
    .selectFrom('projects')
    .leftJoin('templates', (join) =>
      join.onRef('templates.project_id', '=', 'projects.id').on('templates.name', '=', templateName),
    )
    .select([
      'projects.provider_phone_number_id',
      'projects.provider_access_token_enc',
      'templates.id',
      'templates.project_id',
      'templates.name',
      'templates.language',
      'templates.category',
      'templates.status',
      'templates.components',
      'templates.rejection_reason',
      'templates.provider_template_id',
      'templates.review_due_at',
      'templates.lease_expires_at',
      'templates.created_at',
      'templates.updated_at',
    ])
    .where('projects.id', '=', projectId)
    .execute();
  const first = rows[0];
  if (!first) return undefined;
  return {
    providerConfigured: first.provider_phone_number_id !== null && first.provider_access_token_enc !== null,
    templates: rows
      .filter((row) => row.id !== null)
      .map(({ provider_phone_number_id: _phone, provider_access_token_enc: _token, ...template }) => template as TemplatesTable),
  };
}
