import { type SelectQueryBuilder, sql } from 'kysely';
import { claimProjectHeads, moveLeases } from './claims.ts';
import { COMMON_DELIVERY_EVENTS_SQL, isCommonDeliveryEvent } from './deliveryEvents.ts';
import type { Db } from './database.ts';
import {
  attemptOf,
  deliveryIdBound,
  deliveryIdOf,
  deliveryOf,
  storedDelivery,
  storedDeliveryId,
  storedMessageId,
} from './deliveryIds.ts';
import { postgresPageLimit } from './pageLimit.ts';
import { dialectOf, statement } from './prepared.ts';
import { withPayloads } from './webhookPayloads.ts';
import { uuid7LowerBound } from '../domain/uuid7.ts';
import type {
  ProjectsTable,
  Tables,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookDeliveryStatus,
} from './tables.ts';

// The webhook delivery log and queue. A delivery is one (status event, callback URL) pair; it is
// due while pending (due_at set), holds a lease while a worker attempts it, and keeps its latest
// attempt in its own row (last_*), the earlier ones in webhook_attempts: a delivery answered at
// its first attempt has no webhook_attempts row. Every query names the project, the worker's
// writes too: a delivery is found by its key (project_id, id), there is no index of ids alone
// (migration 0026). On SQLite its ids are stored as bytes (deliveryIds.ts, migration 0027): every
// value compared with one is encoded here, every row read is decoded.

export type WebhookDeliveryRow = WebhookDeliveriesTable;
export type WebhookAttemptRow = WebhookAttemptsTable;

export interface DeliveryWithAttempts {
  delivery: WebhookDeliveryRow;
  attempts: WebhookAttemptRow[];
  /** The open circuit of the receiver a pending delivery waits for, if any. */
  circuit?: WebhookCircuitRow;
}

/**
 * The latest attempt a delivery row holds (attempt number attempt_count, sent to its url), as a
 * webhook_attempts row would hold it; undefined when it holds none (not attempted yet, or every
 * attempt in webhook_attempts, as rows written before migration 0023).
 */
export function latestAttemptOf(row: WebhookDeliveryRow): WebhookAttemptRow | undefined {
  if (row.last_attempt_at === null || row.last_attempt_at === undefined) return undefined;
  return {
    id: '',
    delivery_id: row.id,
    attempt: row.attempt_count,
    at: Number(row.last_attempt_at),
    url: row.url,
    status_code: row.last_status_code ?? null,
    duration_ms: row.last_duration_ms ?? 0,
    error: row.last_error ?? null,
    response_body: row.last_response_body ?? null,
  };
}

export async function insertWebhookDeliveries(db: Db, rows: readonly WebhookDeliveryRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('webhook_deliveries').values(rows.map((row) => storedDelivery(db, row))).execute();
}

export type DeliveryProject = Pick<
  ProjectsTable,
  'id' | 'callback_url' | 'webhook_secret_enc' | 'previous_webhook_secret_enc' | 'previous_webhook_secret_expires_at'
>;

/** What the worker needs of each project to send its deliveries: the URL and the sealed secrets. */
export async function findDeliveryProjects(db: Db, ids: readonly string[]): Promise<Map<string, DeliveryProject>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('projects')
    .select([
      'id',
      'callback_url',
      'webhook_secret_enc',
      'previous_webhook_secret_enc',
      'previous_webhook_secret_expires_at',
    ])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((row) => [row.id, row]));
}

// One message's events are first attempted in the order they happened, at each destination: a
// delivery not yet attempted waits while an earlier event of its message (the state machine's
// order, then the event id) to the same destination (callbackUrl or endpoint) still waits for its
// first attempt, or is in it; other destinations do not wait for each other. Events without a
// message (template, test) wait for nothing. For claims (candidate alias `q`). The earlier
// deliveries are found by their message alone (its id is unique across projects), so the
// message's own index is the only one that matches: with the project's id in the condition, a
// planner without statistics (a fresh PostgreSQL table, SQLite always) walked the project's
// deliveries for each candidate.
const EVENT_RANK = (alias: 'q' | 'e') => sql`case ${sql.ref(`${alias}.event`)}
  when 'message.sent' then 1 when 'message.delivered' then 2 when 'message.read' then 3 else 4 end`;
const FIRST_ATTEMPTS_IN_ORDER = sql`(q.attempt_count > 0 or not exists (
  select 1 from webhook_deliveries e
  where e.message_id = q.message_id
    and (e.endpoint_id = q.endpoint_id or (e.endpoint_id is null and q.endpoint_id is null))
    and e.status = 'pending' and e.attempt_count = 0 and e.id <> q.id
    and (${EVENT_RANK('e')} < ${EVENT_RANK('q')}
      or (${EVENT_RANK('e')} = ${EVENT_RANK('q')} and e.event_id < q.event_id))))`;

export interface DeliveryClaim {
  now: number;
  leaseMs: number;
  /** Project id → how many of its due deliveries to claim at most. */
  quotas: ReadonlyMap<string, number>;
}

/**
 * Claims each project's oldest due deliveries, up to its quota, under a lease (claims.ts
 * claimProjectHeads: the claimed rows' due_at becomes the lease end), keeping a message's first
 * attempts in order. On SQLite, call it in a transaction: one statement per distinct quota, one commit.
 */
export async function claimWebhookDeliveries(
  db: Db,
  claim: DeliveryClaim,
): Promise<WebhookDeliveryRow[]> {
  return (await claimProjectHeads(db, 'webhook_deliveries', { ...claim, where: FIRST_ATTEMPTS_IN_ORDER })).map(deliveryOf);
}

/**
 * Moves the leases of one project's claimed deliveries (claims.ts moveLeases: only those whose
 * lease ends at `leaseEnd`); returns the ids moved.
 */
export async function moveDeliveryLeases(
  db: Db,
  projectId: string,
  ids: readonly string[],
  leaseEnd: number,
  to: { dueAt: number; leaseEnd: number | null },
): Promise<string[]> {
  const stored = ids.map((id) => storedDeliveryId(db, id)) as unknown as string[];
  return (await moveLeases(db, 'webhook_deliveries', stored, leaseEnd, to, projectId)).map((id) => deliveryIdOf(id));
}

/**
 * Whether a claim is best made in the writer's next group commit: with SQLite every commit is an
 * fsync on the one connection. With PostgreSQL a claim is one statement on a connection of its
 * own, and waiting for others' commits only delays it.
 */
export function claimsJoinGroupCommit(db: Db): boolean {
  return dialectOf(db) === 'sqlite';
}

export interface AttemptOutcomeUpdate {
  /** The delivery's project: with its id, the row's key. */
  projectId: string;
  status: WebhookDeliveryStatus;
  url: string;
  dueAt: number | null;
  now: number;
}

export interface RecordedAttempt {
  /** The attempt made: it becomes the delivery row's latest attempt. */
  attempt: WebhookAttemptRow;
  /** The latest attempt the row held until now (latestAttemptOf), moved to webhook_attempts. */
  previous?: WebhookAttemptRow;
  update: AttemptOutcomeUpdate;
}

/**
 * Records attempts and each delivery's next state, in the caller's transaction (the worker's
 * group commit: many attempts, one commit). On PostgreSQL the deliveries change in one statement
 * (a round trip each would make every commit wait); on SQLite a statement each costs nothing.
 * A delivery erased with its project while its attempt was in flight has nothing to record: it
 * is done.
 */
export async function recordWebhookAttempts(
  trx: Db,
  attempts: readonly RecordedAttempt[],
): Promise<void> {
  const dialect = dialectOf(trx);
  if (attempts.length === 0) return;
  if (dialect === 'sqlite') {
    await recordOnSqlite(trx, attempts);
    return;
  }
  // The deliveries that remain are locked here, in key order (as the erasure locks them: one
  // project's, in id order), so none can vanish before the attempts below reference it — an
  // erasure committed meanwhile is waited for, and what it erased is not found.
  const existing = new Set<string>();
  const idsByProject = new Map(
    [...Map.groupBy(attempts, (item) => item.update.projectId)].map(([projectId, items]) => [projectId, [...new Set(items.map((item) => item.attempt.delivery_id))]]),
  );
  const keys = [...idsByProject.keys()].sort().flatMap((projectId) => idsByProject.get(projectId)!.sort().map((id) => [projectId, id] as const));
  // One statement for the lot (a round trip per project would make every commit wait).
  for (let i = 0; i < keys.length; i += 500) {
    const chunk = keys.slice(i, i + 500);
    const rows = await sql<{ id: string }>`
      select id from webhook_deliveries
      where (project_id, id) in (select * from unnest(${chunk.map(([projectId]) => projectId)}::text[], ${chunk.map(([, id]) => id)}::text[]))
      order by project_id, id
      for no key update`.execute(trx);
    for (const row of rows.rows) existing.add(row.id);
  }
  const recorded = existing.size < keys.length ? attempts.filter((item) => existing.has(item.attempt.delivery_id)) : attempts;
  if (recorded.length === 0) return;
  await insertEarlierAttempts(trx, recorded);
  // In key order, so that two recorders never wait for each other in a cycle.
  const keyOf = (item: RecordedAttempt) => `${item.update.projectId}\u0000${item.attempt.delivery_id}`;
  const rows = [...recorded].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  const column = <T>(pick: (item: RecordedAttempt) => T) => rows.map(pick);
  await sql`
    update webhook_deliveries set status = v.status, url = v.url, attempt_count = v.attempt_count,
      due_at = v.due_at, lease_expires_at = null, updated_at = v.updated_at,
      last_attempt_at = v.at, last_status_code = v.status_code, last_duration_ms = v.duration_ms,
      last_error = v.error, last_response_body = v.response_body
    from unnest(
      ${column((item) => item.update.projectId)}::text[],
      ${column((item) => item.attempt.delivery_id)}::text[], ${column((item) => item.update.status)}::text[],
      ${column((item) => item.update.url)}::text[], ${column((item) => item.attempt.attempt)}::int[],
      ${column((item) => item.update.dueAt)}::bigint[], ${column((item) => item.update.now)}::bigint[],
      ${column((item) => item.attempt.at)}::bigint[], ${column((item) => item.attempt.status_code)}::int[],
      ${column((item) => item.attempt.duration_ms)}::int[], ${column((item) => item.attempt.error)}::text[],
      ${column((item) => item.attempt.response_body)}::text[]
    ) as v(project_id, id, status, url, attempt_count, due_at, updated_at, at, status_code, duration_ms, error, response_body)
    where webhook_deliveries.project_id = v.project_id and webhook_deliveries.id = v.id`.execute(trx);
}

const RECORD_ATTEMPT_SQLITE = statement(`update webhook_deliveries set status = ?, url = ?, attempt_count = ?,
  due_at = ?, lease_expires_at = null, updated_at = ?, last_attempt_at = ?, last_status_code = ?,
  last_duration_ms = ?, last_error = ?, last_response_body = ? where project_id = ? and id = ?`);

/**
 * SQLite: a statement per attempt, by key, whose count of changed rows says whether the delivery
 * still exists (the writer is this connection's alone: nothing vanishes meanwhile), then the
 * earlier attempts of those that do — no read of the deliveries first, which cost a statement per
 * project per commit.
 */
async function recordOnSqlite(trx: Db, attempts: readonly RecordedAttempt[]): Promise<void> {
  const recorded: RecordedAttempt[] = [];
  for (const item of attempts) {
    const { attempt, update } = item;
    const result = await RECORD_ATTEMPT_SQLITE.execute(trx, [
      update.status, update.url, attempt.attempt, update.dueAt, update.now, attempt.at, attempt.status_code,
      attempt.duration_ms, attempt.error, attempt.response_body, update.projectId, storedDeliveryId(trx, attempt.delivery_id),
    ]);
    if (Number(result.numAffectedRows ?? 0) > 0) recorded.push(item);
  }
  await insertEarlierAttempts(trx, recorded);
}

/** The attempts the recorded deliveries held until now (only retried ones have one), into webhook_attempts. */
async function insertEarlierAttempts(trx: Db, recorded: readonly RecordedAttempt[]): Promise<void> {
  const previous = recorded.flatMap((item) => (item.previous ? [item.previous] : []));
  for (let i = 0; i < previous.length; i += 500) {
    await trx
      .insertInto('webhook_attempts')
      .values(previous.slice(i, i + 500).map((attempt) => ({ ...attempt, delivery_id: storedDeliveryId(trx, attempt.delivery_id) as string })))
      .execute();
  }
}

/** The origin (scheme://host:port) a URL is sent to: the unit of receiver limits and circuits. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid';
  }
}

/** Each delivery with its attempts and, while it is pending, its receiver's open circuit. */
async function withAttempts(db: Db, deliveries: WebhookDeliveryRow[]): Promise<DeliveryWithAttempts[]> {
  if (deliveries.length === 0) return [];
  const attempts = (
    await db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where(
        'delivery_id',
        'in',
        deliveries.map((row) => storedDeliveryId(db, row.id) as string),
      )
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute()
  ).map(attemptOf);
  const byDelivery = new Map<string, WebhookAttemptRow[]>();
  for (const attempt of attempts) {
    const list = byDelivery.get(attempt.delivery_id) ?? [];
    list.push(attempt);
    byDelivery.set(attempt.delivery_id, list);
  }
  for (const delivery of deliveries) {
    const latest = latestAttemptOf(delivery);
    if (latest) byDelivery.set(delivery.id, [...(byDelivery.get(delivery.id) ?? []), latest]);
  }
  const pending = deliveries.filter((row) => row.status === 'pending');
  const circuits = await findWebhookCircuits(
    db,
    pending.map((row) => originOf(row.url)),
  );
  return deliveries.map((delivery) => {
    const circuit = delivery.status === 'pending' ? circuits.get(originOf(delivery.url)) : undefined;
    return { delivery, attempts: byDelivery.get(delivery.id) ?? [], ...(circuit && { circuit }) };
  });
}

export async function findWebhookDelivery(
  db: Db,
  projectId: string,
  id: string,
): Promise<DeliveryWithAttempts | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', storedDeliveryId(db, id) as string)
    .executeTakeFirst();
  if (!row) return undefined;
  return (await withAttempts(db, await withPayloads(db, [deliveryOf(row)])))[0];
}

export interface DeliveryFilter {
  /** Page size plus one, to learn whether there is a next page. */
  limit: number;
  /** Continue after this id (exclusive), newest first. */
  before?: string;
  status?: WebhookDeliveryStatus;
  event?: string;
  messageId?: string;
  /** Created at or after (epoch ms). */
  since?: number;
  /** Created before (epoch ms). */
  until?: number;
}

/**
 * Where a page of the log is read from: the table; or, on PostgreSQL with a message named, that
 * message's few deliveries through its own index (the message id alone, migration 0026), behind a
 * fence (offset 0) the planner plans on its own — as a plain condition it combined that index with
 * the project's key range of older ids (a read of the project's history).
 */
function deliveriesOf(db: Db, messageId: string | undefined): SelectQueryBuilder<Tables, 'webhook_deliveries', object> {
  if (messageId === undefined || dialectOf(db) !== 'postgres') return db.selectFrom('webhook_deliveries');
  const ofMessage = db.selectFrom('webhook_deliveries').selectAll().where('message_id', '=', messageId).offset(0);
  return db.selectFrom(ofMessage.as('webhook_deliveries')) as unknown as SelectQueryBuilder<Tables, 'webhook_deliveries', object>;
}

/** A page of the project's deliveries, newest first (ids are UUIDv7: they sort by creation time). */
export async function listWebhookDeliveries(
  db: Db,
  projectId: string,
  filter: DeliveryFilter,
): Promise<DeliveryWithAttempts[]> {
  let query = deliveriesOf(db, filter.messageId).selectAll().where('project_id', '=', projectId);
  if (filter.before !== undefined) query = query.where('id', '<', deliveryIdBound(db, filter.before).bound as string);
  // Failed and pending deliveries each have a partial index in id order (migrations 0014_keyed_by_project, 0019);
  // a planner uses one only for a literal condition, as its own, never for a parameter. A
  // delivery is pending exactly while it is due (due_at set: every write that sets one status
  // sets the other), so the pending filter is the index's condition alone — with `status =
  // 'pending'` beside it PostgreSQL judged the two apart, under-estimated a backlog and read it
  // all to sort it.
  if (filter.status === 'failed') query = query.where(sql<boolean>`status = 'failed'`);
  else if (filter.status === 'pending') query = query.where(sql<boolean>`due_at is not null`);
  else if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.event !== undefined) {
    query = query.where('event', '=', filter.event);
    if (!isCommonDeliveryEvent(filter.event)) query = query.where(sql<boolean>`event not in (${sql.raw(COMMON_DELIVERY_EVENTS_SQL)})`);
  }
  if (filter.messageId !== undefined) query = query.where('message_id', '=', storedMessageId(db, filter.messageId) as string);
  // Ids carry their creation time (UUIDv7), so the time filters are bounds of the id range the
  // page walks, as for messages. (A condition on created_at beside them made PostgreSQL estimate
  // its selectivity over every tenant's rows and read the whole range to sort it.)
  if (filter.since !== undefined) query = query.where('id', '>=', deliveryIdBound(db, uuid7LowerBound(filter.since)).bound as string);
  if (filter.until !== undefined) query = query.where('id', '<', deliveryIdBound(db, uuid7LowerBound(filter.until)).bound as string);
  // On PostgreSQL a limit its planner cannot read, so the page walks its index in order (pageLimit.ts).
  const limit = dialectOf(db) === 'postgres' ? postgresPageLimit(filter.limit) : filter.limit;
  const rows = await query.orderBy('id', 'desc').limit(limit).execute();
  return withAttempts(db, rows.map(deliveryOf));
}

/** Every delivery of one message, oldest first, for its events view (join on delivery.event_id). */
export async function listDeliveriesForMessage(
  db: Db,
  projectId: string,
  messageId: string,
): Promise<DeliveryWithAttempts[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('message_id', '=', storedMessageId(db, messageId) as string)
    .orderBy('id')
    .execute();
  return withAttempts(db, rows.map(deliveryOf));
}

/**
 * Makes a delivery due now, whatever its status, for a manual retry. A delivery whose attempt is
 * in flight (live lease) is left alone: that attempt is the retry. Returns false when the project
 * has no such delivery.
 */
export async function requestWebhookRetry(db: Db, projectId: string, id: string, now: number): Promise<boolean> {
  const updated = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', due_at: now, updated_at: now })
    .where('project_id', '=', projectId)
    .where('id', '=', storedDeliveryId(db, id) as string)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', now)]))
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return true;
  const row = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('project_id', '=', projectId)
    .where('id', '=', storedDeliveryId(db, id) as string)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Makes the project's failed deliveries whose last attempt was at or after `since` due now, in one
 * statement (the partial index of failed deliveries by updated_at narrows them: a failed
 * delivery's updated_at is when its last attempt was recorded, never before it began). Each is
 * then attempted again with the same id and body. Returns how many.
 */
export async function requeueFailedDeliveries(db: Db, projectId: string, since: number, now: number): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', due_at: now, lease_expires_at: null, updated_at: now })
    .where('project_id', '=', projectId)
    .where('status', '=', 'failed')
    .where('updated_at', '>=', since)
    .where((eb) =>
      eb.or([
        eb('last_attempt_at', '>=', since),
        // A row written before migration 0023 keeps its attempts in webhook_attempts only.
        eb.and([
          eb('last_attempt_at', 'is', null),
          eb.exists(
            eb
              .selectFrom('webhook_attempts as a')
              .select('a.id')
              .whereRef('a.delivery_id', '=', 'webhook_deliveries.id')
              .where('a.at', '>=', since),
          ),
        ]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** How many of these projects' deliveries are due now (for the held-deliveries gauge). */
export async function countDueWebhookDeliveries(db: Db, projectIds: readonly string[], now: number): Promise<number> {
  if (projectIds.length === 0) return 0;
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll().as('due'))
    .where('project_id', 'in', [...projectIds])
    .where('due_at', 'is not', null)
    .where('due_at', '<=', now)
    .executeTakeFirst();
  return Number(row?.due ?? 0);
}

export interface WebhookQueueStats {
  /** Pending deliveries, due or not. */
  depth: number;
  /** The due time of the oldest delivery that is due, if any. */
  oldestDueAt: number | undefined;
}

export async function webhookQueueStats(db: Db, now: number): Promise<WebhookQueueStats> {
  const result = await sql<{ depth: number | string; oldest: number | string | null }>`
    select count(*) as depth, min(case when due_at <= ${now} then due_at end) as oldest
    from webhook_deliveries where due_at is not null`.execute(db);
  const row = result.rows[0];
  return {
    depth: Number(row?.depth ?? 0),
    oldestDueAt: row?.oldest === null || row?.oldest === undefined ? undefined : Number(row.oldest),
  };
}

// Receivers whose circuit is open (workers/webhookCircuits.ts): one row per origin while it is
// open, written by the worker that opened it, read by any process that shows the delivery log.
// Not in tables.ts: nothing but this module touches the table.

export interface WebhookCircuitRow {
  origin: string;
  /** When the circuit opened (the start of this outage, as this worker saw it). */
  opened_at: number;
  /** No attempt to the origin before this; then one attempt probes it. */
  retry_at: number;
  cooldown_ms: number;
  /** Consecutive failed attempts when it (re)opened. */
  failures: number;
  last_error: string | null;
  updated_at: number;
}

const withCircuits = (db: Db) => db.withTables<{ webhook_circuits: WebhookCircuitRow }>();

export async function listWebhookCircuits(db: Db): Promise<WebhookCircuitRow[]> {
  return withCircuits(db).selectFrom('webhook_circuits').selectAll().execute();
}

async function findWebhookCircuits(db: Db, origins: readonly string[]): Promise<Map<string, WebhookCircuitRow>> {
  if (origins.length === 0) return new Map();
  const rows = await withCircuits(db)
    .selectFrom('webhook_circuits')
    .selectAll()
    .where('origin', 'in', [...new Set(origins)])
    .execute();
  return new Map(rows.map((row) => [row.origin, row]));
}

/** Records that a receiver's circuit opened (or opened again after a failed probe). */
export async function saveWebhookCircuit(db: Db, row: WebhookCircuitRow): Promise<void> {
  const { origin: _origin, ...changes } = row;
  await withCircuits(db)
    .insertInto('webhook_circuits')
    .values(row)
    .onConflict((oc) => oc.column('origin').doUpdateSet(changes))
    .execute();
}

export async function deleteWebhookCircuit(db: Db, origin: string): Promise<void> {
  await withCircuits(db).deleteFrom('webhook_circuits').where('origin', '=', origin).execute();
}
