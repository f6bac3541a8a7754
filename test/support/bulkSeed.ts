import { sql } from 'kysely';
import type { Database } from '../../src/db/database.ts';
import { idLowerBound } from '../../src/domain/ids.ts';

// Bulk data for plan tests: many projects and messages, written by one SQL statement per table
// (generate_series on PostgreSQL, a recursive CTE on SQLite), shaped like what svc writes for a
// message that reached READ with its three webhooks delivered. The first project is the "old
// tenant": its messages are the oldest of all, so every other project has newer ones, the case
// where a plan that walks a global id index backwards and filters by project reads everything.
//
// Ids sort as svc's do (by time) but are made from the row number: `msg_` + 26 digits.

export interface BulkShape {
  projects: number;
  messages: number;
  /** How many of the messages (the oldest) belong to the first project. */
  oldTenantMessages: number;
  /** How many of the newest messages have their deliveries due and not yet attempted (default 0). */
  deliveryBacklog?: number;
  /** Without each message's events, deliveries and attempts (default: with). */
  messagesOnly?: boolean;
  /**
   * Projects that exist already (made through svc's API, with keys and templates), in the order
   * `projects` counts them: their ids are used instead of inserting `proj_bulk…` rows.
   */
  projectIds?: readonly string[];
  /** When message 1 is accepted (default BULK_START) and the time between two (default BULK_SPACING_MS). */
  startAt?: number;
  spacingMs?: number;
}

export const OLD_TENANT = 'proj_bulk0000000';
/** Message n is accepted at BULK_START + n × BULK_SPACING_MS (10 minutes: 20,000 messages span 139 days). */
export const BULK_START = 1_700_000_000_000;
export const BULK_SPACING_MS = 600_000;
/** As svc's ids (domain/ids.ts): the time in 10 Crockford base32 characters, then 16 more (here the row number). */
// idLowerBound, not newId: newId never goes back in time within a process, so it would give a
// later time to a message asked for after a newer one.
export const bulkMessageId = (n: number) => idLowerBound('msg', BULK_START + n * BULK_SPACING_MS) + String(n).padStart(16, '0');

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** SQL text of the 10-character base32 time of ids (domain/ids.ts encodeTime), for an integer expression. */
function timeIdText(database: Database, expression: string): string {
  const cast = database.dialect === 'postgres' ? '::int' : '';
  return Array.from({ length: 10 }, (_, i) => `substr('${ALPHABET}', (((${expression}) / ${32 ** (9 - i)}) % 32 + 1)${cast}, 1)`).join(' || ');
}
/** UUIDv7-shaped, its time the delivery's created_at (the message's time + k × 500 ms), as svc makes them. */
export const bulkDeliveryId = (n: number, k: 1 | 2 | 3) => {
  const hex = (BULK_START + n * BULK_SPACING_MS + k * 500).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-700${k}-8000-${String(n).padStart(12, '0')}`;
};
export const projectIdOf = (n: number) => `proj_bulk${String(n).padStart(7, '0')}`;

function series(database: Database, count: number) {
  return database.dialect === 'postgres'
    ? sql`select g as n from generate_series(1, ${count}::bigint) g`
    : sql`with recursive s(n) as (select 1 union all select n + 1 from s where n < ${count}) select n from s`;
}

/** SQL text of a zero-padded number: `msg_` ids and friends sort by n. */
function padText(database: Database, expression: string, width: number): string {
  return database.dialect === 'postgres'
    ? `lpad((${expression})::text, ${width}, '0')`
    : `substr('${'0'.repeat(width)}' || (${expression}), -${width}, ${width})`;
}

function padded(database: Database, expression: string, width: number) {
  return sql.raw(padText(database, expression, width));
}

/** SQLite: the value (0–9) of the decimal digit at 1-based `at` of `text`, as a base32 digit. */
const digitAt = (text: string, at: number) => `cast(substr(${text}, ${at}, 1) as integer)`;

/** SQLite: 8 base32 digits from `at` (40 bits) as 10 hex characters. */
const run8 = (text: string, at: number) =>
  `printf('%010x', ${Array.from({ length: 8 }, (_, p) => `${digitAt(text, at + p)} * ${32 ** (7 - p)}`).join(' + ')})`;

/**
 * SQLite: the 16 bytes svc stores since its migration 0027 (src/db/deliveryIds.ts) for an id
 * `prefix_` + the 10 base32 characters of `time` (an SQL integer expression) + 16 decimal digits
 * (`digits16`, an SQL text expression): the time's 48 bits, then the digits' 5 bits each.
 */
export function prefixedIdBytes(time: string, digits16: string): string {
  return `unhex(printf('%012x', ${time}) || ${run8(digits16, 1)} || ${run8(digits16, 9)})`;
}

/** SQLite: the 16 bytes of `evt_` + 26 decimal digits, the first 0–7 (3 bits, then 5 a digit). */
function eventIdBytes(digits26: string): string {
  const text = `(${digits26})`;
  return `unhex(printf('%02x', ${digitAt(text, 1)} * 32 + ${digitAt(text, 2)}) || ${run8(text, 3)} || ${run8(text, 11)} || ${run8(text, 19)})`;
}

export async function seedBulk(database: Database, shape: BulkShape): Promise<void> {
  const { db } = database;
  const old = shape.oldTenantMessages;
  const others = shape.projects - 1;
  // Project of message n: the old tenant for the first `old`, then round robin over the rest.
  const projectOf = `case when n <= ${old} then 0 else 1 + ((n - ${old}) % ${others}) end`;
  const time = `(${shape.startAt ?? BULK_START} + n * ${shape.spacingMs ?? BULK_SPACING_MS})`;
  const given = shape.projectIds;
  if (given !== undefined && given.length !== shape.projects) throw new Error(`projectIds: ${given.length} ids for ${shape.projects} projects`);
  // The project of message n, by number: `proj_bulk` and the number, or the given id of that number.
  const projectOfN = sql.raw(
    given === undefined ? `'proj_bulk' || ${padText(database, projectOf, 7)}` : `(select id from bulk_seed_projects where k = ${projectOf})`,
  );
  const status = `case when n % 100 = 0 then 'FAILED' when n % 50 = 1 then 'DELIVERED' else 'READ' end`;

  if (given === undefined) {
    await sql`insert into projects (id, name, owner_email, webhook_secret_enc, created_at, updated_at)
      select ${sql.raw(`'proj_bulk' || `)}${padded(database, 'n - 1', 7)}, 'bulk', 'owner@example.com', 'x', 0, 0
      from (${series(database, shape.projects)}) s`.execute(db);
  } else {
    // A table, not a temporary one: PostgreSQL's statements may run on different connections.
    await sql`create table bulk_seed_projects (k integer primary key, id text not null)`.execute(db);
    for (let start = 0; start < given.length; start += 500) {
      await db
        .insertInto('bulk_seed_projects' as never)
        .values(given.slice(start, start + 500).map((id, i) => ({ k: start + i, id })) as never)
        .execute();
    }
  }

  const messageId = sql.raw(`${timeIdText(database, time)} || ${padText(database, 'n', 16)}`);
  await sql`insert into messages (id, project_id, recipient, template_id, template_name, language, category,
      variables, header_variables, rendered, status, attempts, due_at, lease_expires_at, provider_message_id, error,
      queued_at, sent_at, delivered_at, read_at, failed_at, updated_at)
    select 'msg_' || ${messageId}, ${projectOfN},
      '+1555' || ${padded(database, 'n % 100000', 7)}, 'tpl_bulk', case when n % 10 = 0 then 'promo' else 'order_update' end,
      'en_US', 'UTILITY', '{"1":"Ana","2":"1001"}', null,
      '{"body":"Hello Ana, your order 1001 has shipped. Track it in the app."}',
      ${sql.raw(status)}, 1, null, null, 'wamid.' || ${messageId},
      case when n % 100 = 0 then '{"code":"131026","title":"Message undeliverable","message":"x"}' end,
      ${sql.raw(time)}, ${sql.raw(time)} + 100, ${sql.raw(time)} + 600, ${sql.raw(time)} + 1600,
      case when n % 100 = 0 then ${sql.raw(time)} + 600 end, ${sql.raw(time)} + 1600
    from (${series(database, shape.messages)}) s`.execute(db);

  // Since migration 0027 SQLite stores a delivery's id, event id and message id as 16 bytes, and
  // its created_at as null when its id carries it (src/db/deliveryIds.ts): seeded as svc writes them.
  const idsAsBytes =
    database.dialect === 'sqlite' &&
    (await sql`select 1 from svc_migrations where name = '0027_delivery_ids_as_bytes'`.execute(db)).rows.length > 0;
  // Three status events and three deliveries (one attempt each) per message; the newest messages'
  // deliveries are a backlog, due and never attempted (a receiver that fell behind).
  const backlogFrom = shape.messages - (shape.deliveryBacklog ?? 0);
  for (const [k, eventStatus, event] of [
    [1, 'SENT', 'message.sent'],
    [2, 'DELIVERED', 'message.delivered'],
    [3, 'READ', 'message.read'],
  ] as const) {
    if (shape.messagesOnly) break;
    const eventId = sql.raw(`'evt_' || ${padText(database, 'n', 25)} || '${k}'`);
    await sql`insert into message_events (id, message_id, project_id, status, occurred_at, error, created_at)
      select ${eventId}, 'msg_' || ${messageId}, ${projectOfN}, ${eventStatus},
        ${sql.raw(time)} + ${k * 500}, null, ${sql.raw(time)} + ${k * 500}
      from (${series(database, shape.messages)}) s`.execute(db);
    const hex = database.dialect === 'postgres' ? `lpad(to_hex(${time} + ${k * 500}), 12, '0')` : `printf('%012x', ${time} + ${k * 500})`;
    const deliveryId = sql.raw(
      idsAsBytes
        ? `unhex(${hex} || '700${k}8000' || ${padText(database, 'n', 12)})`
        : `substr(${hex}, 1, 8) || '-' || substr(${hex}, 9, 4) || '-700${k}-8000-' || ${padText(database, 'n', 12)}`,
    );
    const deliveryEventId = idsAsBytes ? sql.raw(eventIdBytes(`${padText(database, 'n', 25)} || '${k}'`)) : eventId;
    const deliveryMessageId = idsAsBytes ? sql.raw(prefixedIdBytes(time, padText(database, 'n', 16))) : sql`'msg_' || ${messageId}`;
    await sql`insert into webhook_deliveries (id, project_id, event_id, message_id, event, url, payload, status,
        attempt_count, due_at, lease_expires_at, created_at, updated_at, endpoint_id, template_id)
      select ${deliveryId}, ${projectOfN}, ${deliveryEventId}, ${deliveryMessageId}, ${event},
        'https://hooks.example.com/svc', '{}', case when n > ${backlogFrom} then 'pending' when n % 200 = 0 then 'failed' else 'succeeded' end,
        case when n > ${backlogFrom} then 0 else 1 end, case when n > ${backlogFrom} then ${sql.raw(time)} + ${k * 500} end, null,
        ${idsAsBytes ? sql`null` : sql`${sql.raw(time)} + ${k * 500}`}, ${sql.raw(time)} + ${k * 500 + 50}, null, null
      from (${series(database, shape.messages)}) s`.execute(db);
    await sql`insert into webhook_attempts (id, delivery_id, attempt, at, url, status_code, duration_ms, error, response_body)
      select 'att_' || ${padded(database, 'n', 25)} || '${sql.raw(String(k))}', ${deliveryId}, 1, ${sql.raw(time)} + ${k * 500},
        'https://hooks.example.com/svc', 200, 12, null, null
      from (${series(database, shape.messages)}) s where n <= ${backlogFrom}`.execute(db);
  }
  await sql`insert into message_counts (project_id, hour, status, template, language, count)
    select project_id, (queued_at / 3600000) * 3600000, status, template_name, language, count(*) from messages
    group by project_id, (queued_at / 3600000) * 3600000, status, template_name, language`.execute(db);
  if (given !== undefined) await sql`drop table bulk_seed_projects`.execute(db);
  // Statistics as in production: PostgreSQL's autovacuum gathers them, and svc never analyzes
  // SQLite, whose planner then chooses by the schema alone (a plan test with statistics there
  // once passed a plan that production never ran). These tables only: a bare ANALYZE on
  // PostgreSQL reads every schema of the database.
  if (database.dialect !== 'postgres') return;
  for (const table of ['projects', 'messages', 'message_events', 'webhook_deliveries', 'webhook_attempts', 'message_counts']) {
    await sql`analyze ${sql.table(table)}`.execute(db);
  }
}
