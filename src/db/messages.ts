import { sql } from 'kysely';
import { findApiKeyByHash, type KeyCheckColumns, keyCheckedSql, type KeyForRequest, keyOfCheckedRows } from './apiKeys.ts';
import type { Db } from './database.ts';
import { countAcceptedMessages, countAcceptedSql } from './messageCounts.ts';
import { columnsOf, dialectOf, numbered, postgresStatement, statement, type Statement } from './prepared.ts';
import { POSTGRES_PAGE_LIMIT } from './pageLimit.ts';
import { withLinkedIdentities } from './recipientLinks.ts';
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
  content: object;
  /** JSON RichSendParameters of a rich template's message; absent for the spec's templates. */
  richParameters?: string;
  /** Epoch ms: not submitted before then. */
  sendAt?: number;
  batchId?: string;
}

/** The row of a message just accepted: QUEUED, due now or at its sendAt. */
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
    due_at: message.sendAt ?? now,
    lease_expires_at: null,
    provider_message_id: null,
    error: null,
    queued_at: now,
    sent_at: null,
    delivered_at: null,
    read_at: null,
    failed_at: null,
    updated_at: now,
    scheduled_for: message.sendAt ?? null,
    canceled_at: null,
    batch_id: message.batchId ?? null,
    rich_parameters: message.richParameters ?? null,
  };
}

type PostgresType = 'text' | 'int' | 'bigint';

/** What svc does with a column of messages, besides reading whole rows. */
interface MessageColumn {
  /** Its PostgreSQL type (arrays of it feed the many-row insert and update). */
  readonly type: PostgresType;
  /** Written when a message is accepted (queuedMessageRow); the others start null. */
  readonly inserted: boolean;
  /** Set by the workers after acceptance (updateMessages). */
  readonly changed: boolean;
  /** Read for the API's view of a message (messageView). */
  readonly viewed: boolean;
}

const column = <I extends boolean, C extends boolean, V extends boolean>(type: PostgresType, inserted: I, changed: C, viewed: V) =>
  ({ type, inserted, changed, viewed }) as const;

/**
 * Every column of messages, in table order, and what svc does with it: the one list the insert,
 * the workers' update and the view's select are derived from. A column of MessagesTable missing
 * here, or one here that the table lacks, is a type error.
 */
const MESSAGE_COLUMN_MAP = {
  id: column('text', true, false, true),
  project_id: column('text', true, false, false),
  recipient: column('text', true, false, true),
  template_id: column('text', true, false, false),
  template_name: column('text', true, false, true),
  language: column('text', true, false, true),
  category: column('text', true, false, false),
  variables: column('text', true, false, true),
  header_variables: column('text', true, false, true),
  rendered: column('text', true, false, true),
  status: column('text', true, true, true),
  attempts: column('int', true, true, false),
  due_at: column('bigint', true, true, false),
  lease_expires_at: column('bigint', true, true, false),
  provider_message_id: column('text', true, true, true),
  error: column('text', true, true, true),
  queued_at: column('bigint', true, false, true),
  sent_at: column('bigint', true, true, true),
  delivered_at: column('bigint', true, true, true),
  read_at: column('bigint', true, true, true),
  failed_at: column('bigint', true, true, true),
  updated_at: column('bigint', true, true, true),
  scheduled_for: column('bigint', true, false, true),
  canceled_at: column('bigint', true, true, true),
  batch_id: column('text', true, false, true),
  rich_parameters: column('text', true, false, false),
  pricing: column('text', false, true, true),
  held_at: column('bigint', false, true, true),
  send_route: column('text', false, true, true),
  recipient_user_id: column('text', false, true, true),
  recipient_phone: column('text', false, true, true),
  cost: column('text', false, true, true),
} as const satisfies { readonly [Name in keyof MessageRow]-?: MessageColumn };

type MessageColumnMap = typeof MESSAGE_COLUMN_MAP;
type ColumnsWhere<Flag extends 'inserted' | 'changed' | 'viewed'> = {
  [Name in keyof MessageColumnMap]: MessageColumnMap[Name][Flag] extends true ? Name : never;
}[keyof MessageColumnMap];

function columnsWhere<Flag extends 'inserted' | 'changed' | 'viewed'>(flag: Flag): readonly (readonly [ColumnsWhere<Flag>, PostgresType])[] {
  return Object.entries(MESSAGE_COLUMN_MAP).flatMap(([name, spec]) =>
    spec[flag] ? [[name as ColumnsWhere<Flag>, spec.type] as const] : [],
  );
}

// The inserts below are one prepared statement per row on SQLite (in-process: microseconds each)
// and one statement for any number of rows on PostgreSQL (unnest of one array per column).
const MESSAGE_COLUMNS = columnsWhere('inserted');

const EVENT_COLUMNS: readonly (readonly [keyof MessageEventRow, string])[] = [
  ['id', 'text'],
  ['message_id', 'text'],
  ['project_id', 'text'],
  ['status', 'text'],
  ['occurred_at', 'bigint'],
  ['error', 'text'],
  ['created_at', 'bigint'],
];

interface RowInsert<Row> {
  statement: Statement<never>;
  columns: readonly (keyof Row)[];
}

/** PostgreSQL: an insert of many rows, each parameter $1, $2, … an array of one column's values. */
function unnestInsert<Row>(table: string, columns: readonly (readonly [keyof Row, string])[]): string {
  return (
    `insert into ${table} (${columns.map(([name]) => String(name)).join(', ')}) select * from unnest(` +
    columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ') +
    ')'
  );
}

function rowInsert<Row>(table: string, columns: readonly (readonly [keyof Row, string])[]): RowInsert<Row> {
  const names = columns.map(([name]) => String(name));
  const sqlite = `insert into ${table} (${names.join(', ')}) values (${names.map(() => '?').join(', ')})`;
  return { statement: statement(sqlite, unnestInsert(table, columns)), columns: columns.map(([name]) => name) };
}

async function insertRows<Row>(db: Db, insert: RowInsert<Row>, rows: readonly Row[]): Promise<void> {
  if (rows.length === 0) return;
  if (dialectOf(db) === 'sqlite') {
    for (const row of rows) await insert.statement.execute(db, insert.columns.map((column) => row[column]));
    return;
  }
  await insert.statement.execute(db, columnsOf(rows, insert.columns));
}

const INSERT_MESSAGE = rowInsert<MessageRow>('messages', MESSAGE_COLUMNS);
const INSERT_MESSAGE_POSTGRES = unnestInsert<MessageRow>('messages', MESSAGE_COLUMNS);
const INSERT_EVENT = rowInsert<MessageEventRow>('message_events', EVENT_COLUMNS);

const ACCEPT_POSTGRES = postgresStatement(
  `with inserted as (${INSERT_MESSAGE_POSTGRES} returning project_id, queued_at, template_name, language),
   counted as (${countAcceptedSql('inserted')})
   select pg_notify($${MESSAGE_COLUMNS.length + 1}, $${MESSAGE_COLUMNS.length + 2})`,
);

/**
 * Accepted messages, in the accept's transaction: their rows, their analytics count (QUEUED) and,
 * on PostgreSQL, the notification that wakes the dispatchers on `channel` (notifier.ts) — there
 * one statement, one round trip where three were.
 */
export async function insertAcceptedMessages(
  db: Db,
  rows: readonly MessageRow[],
  channel: string | undefined,
  /** The notification's payload: the projects the messages are for (workers/notifier.ts). */
  payload = '',
): Promise<void> {
  if (rows.length === 0) return;
  if (dialectOf(db) === 'sqlite') {
    await insertRows(db, INSERT_MESSAGE, rows);
    await countAcceptedMessages(db, rows);
    return;
  }
  await ACCEPT_POSTGRES.execute(db, [...columnsOf(rows, INSERT_MESSAGE.columns), channel, payload]);
}

export async function insertMessageEvents(db: Db, rows: readonly MessageEventRow[]): Promise<void> {
  await insertRows(db, INSERT_EVENT, rows);
}

const MESSAGE_BY_ID = statement<MessageRow>('select * from messages where project_id = ? and id = ?');

export async function findMessage(db: Db, projectId: string, id: string): Promise<MessageRow | undefined> {
  return (await MESSAGE_BY_ID.rows(db, [projectId, id]))[0];
}

/** A read on the request path, with the state of the request's key read in the same statement. */
export interface KeyChecked<T> {
  /** The key with the request's hash; undefined: none. */
  key: KeyForRequest | undefined;
  found: T;
}

const MESSAGE_BY_ID_CHECKING_KEY = statement<KeyCheckColumns & MessageRow>(
  keyCheckedSql('select * from messages where project_id = ? and id = ?'),
);

/** findMessage, and the key with this hash (the key's project is `projectId`). */
export async function findMessageCheckingKey(
  db: Db,
  keyHash: string,
  projectId: string,
  id: string,
): Promise<KeyChecked<MessageRow | undefined>> {
  const rows = await MESSAGE_BY_ID_CHECKING_KEY.rows(db, [keyHash, projectId, id]);
  const row = rows[0];
  return { key: keyOfCheckedRows(rows), found: row === undefined || row.id === null ? undefined : row };
}

const MESSAGE_FOR_UPDATE_SQLITE = statement<MessageRow>('select * from messages where id = ?');
const MESSAGES_FOR_UPDATE_POSTGRES = postgresStatement<MessageRow>(
  'select * from messages where id = any($1::text[]) order by id for update',
);

/** These messages as they are now, locked (PostgreSQL) for the caller's transaction. */
export async function lockMessages(db: Db, ids: string[]): Promise<Map<string, MessageRow>> {
  if (ids.length === 0) return new Map();
  const rows =
    dialectOf(db) === 'postgres'
      ? await MESSAGES_FOR_UPDATE_POSTGRES.rows(db, [ids])
      : (await Promise.all([...ids].sort().map((id) => MESSAGE_FOR_UPDATE_SQLITE.rows(db, [id])))).flat();
  return new Map(rows.map((row) => [row.id, row]));
}

export type MessageChanges = Partial<Omit<MessageRow, 'id' | 'project_id'>>;

// PostgreSQL types of the columns a worker changes, for updating many rows in one statement.
const CHANGEABLE_TYPES: Readonly<Record<string, PostgresType>> = Object.fromEntries(columnsWhere('changed'));

// One prepared update per set of columns changed (a handful: the dispatcher's and the reports' shapes).
const updateStatements = new Map<string, Statement<never>>();

function updateStatementFor(columns: readonly string[]): Statement<never> {
  const shape = columns.join(',');
  let update = updateStatements.get(shape);
  if (update === undefined) {
    for (const column of columns) {
      if (!(column in CHANGEABLE_TYPES)) throw new Error(`updateMessages cannot set ${column}`);
    }
    update = statement(`update messages set ${columns.map((column) => `${column} = ?`).join(', ')} where id = ?`);
    if (updateStatements.size >= 100) updateStatements.clear();
    updateStatements.set(shape, update);
  }
  return update;
}

/**
 * Applies each message's own changes. On PostgreSQL the rows that change the same columns are
 * updated in one statement (one round trip however many rows); SQLite runs in-process, where a
 * prepared statement per row costs microseconds.
 */
export async function updateMessages(
  db: Db,
  updates: readonly { id: string; changes: MessageChanges }[],
): Promise<void> {
  if (dialectOf(db) === 'sqlite') {
    for (const { id, changes } of updates) {
      // As Kysely's set(): a column given as undefined is left as it is.
      const columns = (Object.keys(changes) as (keyof MessageChanges)[]).filter((column) => changes[column] !== undefined);
      if (columns.length === 0) continue;
      await updateStatementFor(columns).execute(db, [...columns.map((column) => changes[column]), id]);
    }
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
  /** `to` with every identity joined to it, when the caller knows them already; else looked up. */
  toJoined?: readonly string[];
  template?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  batchId?: string;
}

/**
 * A page of the project's messages, newest first: `limit + 1` rows after the cursor. Ids sort by
 * queue time, so the time filters become id bounds and every filter walks one index range.
 */
/** What a message's view shows: every column but the dispatcher's bookkeeping. */
export type MessageViewRow = Pick<MessageRow, ColumnsWhere<'viewed'>>;
const VIEW_COLUMNS = columnsWhere('viewed').map(([name]) => name).join(', ');

// Prepared statements per combination of filters used (at most 128).
const listStatements = new Map<string, { sqlite: Statement<MessageViewRow>; postgres: Statement<KeyCheckColumns & MessageViewRow> }>();

/**
 * A page of the project's messages, newest first: `limit + 1` rows after the cursor, and the key
 * with this hash (the key's project is `projectId`). Ids sort by queue time, so the time filters
 * become id bounds and every filter walks one index range.
 */
export async function listMessages(
  db: Db,
  keyHash: string,
  projectId: string,
  filter: MessageFilter,
  page: { limit: number; beforeId?: string },
): Promise<KeyChecked<MessageViewRow[]>> {
  const conditions: [string, ...unknown[]][] = [['project_id = ?', projectId]];
  if (filter.status) conditions.push(['status = ?', filter.status]);
  let severalRecipients = false;
  if (filter.to) {
    // A recipient is every identity joined to it (a phone and its BSUIDs, an old BSUID and its new one).
    const recipients = filter.toJoined ?? (await withLinkedIdentities(db, projectId, [filter.to]));
    severalRecipients = recipients.length > 1;
    conditions.push(
      recipients.length <= 1 ? ['recipient = ?', filter.to] : [`recipient in (${recipients.map(() => '?').join(', ')})`, ...recipients],
    );
  }
  if (filter.template) conditions.push(['template_name = ?', filter.template]);
  if (filter.batchId) conditions.push(['batch_id = ?', filter.batchId]);
  if (filter.since !== undefined) conditions.push(['id >= ?', idLowerBound('msg', filter.since)]);
  if (filter.until !== undefined) conditions.push(['id < ?', idLowerBound('msg', filter.until)]);
  if (page.beforeId) conditions.push(['id < ?', page.beforeId]);
  const where = conditions.map(([condition]) => condition).join(' and ');
  let list = listStatements.get(where);
  if (list === undefined) {
    const read = (limit: string) => `select ${VIEW_COLUMNS} from messages where ${where} order by id desc limit ${limit}`;
    // Several identities of one recipient: SQLite (no statistics) walked the project's index in
    // id order and tested each row's recipient; through the recipient index it reads that
    // person's messages alone and sorts them.
    const sqliteRead = severalRecipients ? read('?').replace('from messages where', 'from messages indexed by messages_by_project_recipient where') : read('?');
    // PostgreSQL: a limit its planner cannot read, so the page walks its index in order (pageLimit.ts).
    list = { sqlite: statement(sqliteRead), postgres: postgresStatement(numbered(keyCheckedSql(read(POSTGRES_PAGE_LIMIT), 'r.id desc'))) };
    listStatements.set(where, list);
  }
  const parameters = [...conditions.flatMap(([, ...values]) => values), page.limit + 1];
  if (dialectOf(db) === 'sqlite') {
    // In-process, the key's own lookup costs less (≈ 5 µs) than its columns on every row of a page.
    return { key: await findApiKeyByHash(db, keyHash), found: await list.sqlite.rows(db, parameters) };
  }
  const rows = await list.postgres.rows(db, [keyHash, ...parameters]);
  return { key: keyOfCheckedRows(rows), found: rows.filter((row) => row.id !== null) };
}

// Through the message's own index. SQLite, without statistics, preferred the project's index
// (project_id, id) for its order and walked every event of the project to find three; there the
// table is keyed (message_id, id) (migration 0025), and NOT INDEXED leaves it that key.
const STORED_EVENTS = statement<MessageEventRow>(
  'select * from message_events not indexed where project_id = ? and message_id = ? order by id',
  'select * from message_events where project_id = $1 and message_id = $2 order by id',
);

/**
 * A message's QUEUED event. It is not stored: the message row, written in the same transaction,
 * is its record (one write per accepted message, not two). Its id is derived from the message's,
 * so it is stable and sorts by the same time. (Messages accepted before this was so have a stored
 * QUEUED row, which is shown instead.)
 */
export function queuedEventOf(message: MessageRow): MessageEventRow {
  return {
    id: `evt_${message.id.slice(message.id.indexOf('_') + 1)}`,
    message_id: message.id,
    project_id: message.project_id,
    status: 'QUEUED',
    occurred_at: message.queued_at,
    error: null,
    created_at: message.queued_at,
  };
}

/** A message's status history in order: QUEUED first, then each change recorded since. */
export async function listMessageEvents(db: Db, message: MessageRow): Promise<MessageEventRow[]> {
  const stored = await STORED_EVENTS.rows(db, [message.project_id, message.id]);
  return stored.some((event) => event.status === 'QUEUED') ? stored : [queuedEventOf(message), ...stored];
}

export interface SendContext {
  /** Whether the project has saved both provider credentials. */
  providerConfigured: boolean;
  /** How many numbers the project suppresses: none, and a send needs no lookup. */
  suppressionCount: number;
  /** The project's suppression_version when read: the accept commit checks it is still that. */
  suppressionVersion: number;
  /** Every language of the named template. */
  templates: TemplatesTable[];
}

type SendContextRow = TemplatesTable & {
  svc_provider_configured: number | boolean;
  svc_suppression_count: number | string;
  svc_suppression_version: number | string;
};

const SEND_CONTEXT = statement<SendContextRow>(
  'select (p.provider_phone_number_id is not null and p.provider_access_token_enc is not null) as svc_provider_configured, ' +
    'p.suppression_count as svc_suppression_count, p.suppression_version as svc_suppression_version, t.* ' +
    'from projects p left join templates t on t.project_id = p.id and t.name = ? where p.id = ?',
);

/**
 * What a send needs to know, in one indexed query: whether the project can send, and the
 * templates of that name (every column). Undefined when the project does not exist.
 */
export async function findSendContext(db: Db, projectId: string, templateName: string): Promise<SendContext | undefined> {
  const rows = await SEND_CONTEXT.rows(db, [templateName, projectId]);
  const first = rows[0];
  if (!first) return undefined;
  return {
    providerConfigured: Boolean(first.svc_provider_configured),
    suppressionCount: Number(first.svc_suppression_count),
    suppressionVersion: Number(first.svc_suppression_version),
    templates: rows
      .filter((row) => row.id !== null)
      .map(
        ({ svc_provider_configured: _c, svc_suppression_count: _n, svc_suppression_version: _v, ...template }) =>
          template as TemplatesTable,
      ),
  };
}

const TEMPLATE_BY_ID_SQLITE = statement<TemplatesTable>('select * from templates where id = ?');
const TEMPLATES_BY_ID_POSTGRES = postgresStatement<TemplatesTable>('select * from templates where id = any($1::text[])');

/** These templates as they are now (the missing ones left out), read inside a write to check what a send relied on. */
export async function currentTemplates(db: Db, ids: readonly string[]): Promise<Map<string, TemplatesTable>> {
  if (ids.length === 0) return new Map();
  const rows =
    dialectOf(db) === 'postgres'
      ? await TEMPLATES_BY_ID_POSTGRES.rows(db, [ids])
      : (await Promise.all(ids.map((id) => TEMPLATE_BY_ID_SQLITE.rows(db, [id])))).flat();
  return new Map(rows.map((row) => [row.id, row]));
}
