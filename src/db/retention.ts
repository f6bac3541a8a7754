import { sql } from 'kysely';
import { idLowerBound } from '../domain/ids.ts';
import { uuid7LowerBound } from '../domain/uuid7.ts';
import type { Db } from './database.ts';
import { deliveryIdBound, deliveryIdOf, messageIdOf, type StoredId, storedDeliveryId, storedMessageId } from './deliveryIds.ts';
import { dialectOf } from './prepared.ts';
import { HOUR_MS } from './messageCounts.ts';

// The purge of data past its retention (README, "Data retention"). Every step is one short
// transaction over at most `limit` rows of one kind, found through an index in time order: the
// ids are time-sortable (msg_/evt_/bat_/tse_/att_ ULIDs, UUIDv7 deliveries), so "older than X" is
// a range of the primary key — or of (project_id, id) for one project — and a step costs the
// same whatever the table holds. Work in flight is never touched: a message still QUEUED (sent
// later, scheduled, retried) or leased, a delivery still pending, and a message with one.

export const DAY_MS = 24 * HOUR_MS;

/** What a step removed, by table. */
export type PurgedCounts = Partial<Record<PurgedKind, number>>;
export type PurgedKind =
  | 'messages'
  | 'message_events'
  | 'message_replies'
  | 'webhook_deliveries'
  | 'webhook_attempts'
  | 'sandbox_submissions'
  | 'template_status_events'
  | 'batches'
  | 'message_counts'
  | 'message_counts_rolled_up'
  | 'recipient_links'
  | 'message_costs';

export interface Step {
  /** Rows of the kind deleted. */
  deleted: PurgedCounts;
  /** Rows read to find them (the step's size). */
  scanned: number;
  /** The keyset cursor to continue from; undefined: this pass is done. */
  next: string | undefined;
}

export interface PassBounds {
  /** Rows last changed before this time (epoch ms) are past retention. */
  cutoff: number;
  /** Continue after this id ('' to start). */
  after: string;
  /** Only this project's rows; undefined: every project's. */
  projectId?: string;
  limit: number;
  /**
   * Only ids below this one (PostgreSQL): the rows of periods not yet ended are left to their
   * period's drop (db/partitions.ts). Undefined: every id before the cutoff.
   */
  idsBelow?: string;
}

/** The lower of a cutoff's id bound and the pass's own limit. */
const below = (bound: string, idsBelow: string | undefined) => (idsBelow !== undefined && idsBelow < bound ? idsBelow : bound);

const rows = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);

/**
 * PostgreSQL: this transaction's commit does not wait for its WAL flush. A purge lost with the
 * server is redone by the next run (SQLite: Database.withoutSync, by the caller).
 */
async function unsyncedCommit(trx: Db): Promise<void> {
  if (dialectOf(trx) === 'postgres') await sql`set local synchronous_commit = off`.execute(trx);
}

/**
 * One step of messages past retention: up to `limit` messages accepted before the cutoff, in id
 * order; those finished (not QUEUED, not leased, last changed before the cutoff, no delivery
 * pending) go, with their status events, webhook deliveries and attempts and sandbox records.
 * Their counts in message_counts stay: analytics keep counting them.
 */
export async function purgeMessagesStep(db: Db, bounds: PassBounds): Promise<Step> {
  const dialect = dialectOf(db);
  let candidates = db
    .selectFrom('messages')
    .select(['id', 'status', 'due_at', 'lease_expires_at', 'updated_at'])
    .where('id', '<', below(idLowerBound('msg', bounds.cutoff), bounds.idsBelow))
    .where('id', '>', bounds.after);
  if (bounds.projectId !== undefined) candidates = candidates.where('project_id', '=', bounds.projectId);
  const found = await candidates.orderBy('id').limit(bounds.limit).execute();
  const next = found.length < bounds.limit ? undefined : found.at(-1)!.id;
  const finished = found
    .filter((m) => m.status !== 'QUEUED' && m.due_at === null && m.lease_expires_at === null && m.updated_at < bounds.cutoff)
    .map((m) => m.id);
  if (finished.length === 0) return { deleted: {}, scanned: found.length, next };

  const deleted = await db.transaction().execute(async (trx) => {
    await unsyncedCommit(trx);
    // Locked (PostgreSQL) and re-read in the transaction: a status report recording a change
    // meanwhile either committed first (and its pending delivery keeps the message) or waits
    // behind the lock and then finds the message gone. A message someone holds is left for the
    // next run rather than waited for.
    let still = trx
      .selectFrom('messages')
      .select('id')
      .where('id', 'in', finished)
      .where('status', '<>', 'QUEUED')
      .where('due_at', 'is', null)
      .orderBy('id');
    if (dialect === 'postgres') still = still.forUpdate().skipLocked();
    const locked = (await still.execute()).map((row) => row.id);
    if (locked.length === 0) return {};
    const busy = new Set(
      (
        await trx
          .selectFrom('webhook_deliveries')
          .select('message_id')
          .where('message_id', 'in', locked.map((id) => storedMessageId(trx, id) as string))
          .where('due_at', 'is not', null)
          .execute()
      ).map((row) => row.message_id && messageIdOf(row.message_id)),
    );
    const ids = locked.filter((id) => !busy.has(id));
    if (ids.length === 0) return {};
    // The deliveries' ids as values, not a subquery: PostgreSQL then seeks each one's attempts in
    // their index instead of hashing the whole attempts table. (Ids as stored, passed back as they
    // are: deliveryIds.ts.)
    const deliveryKeys = await trx
      .selectFrom('webhook_deliveries')
      .select(['project_id', 'id'])
      .where('message_id', 'in', ids.map((id) => storedMessageId(trx, id) as string))
      .execute();
    const deliveryIds = deliveryKeys.map((row) => row.id);
    const attempts = deliveryIds.length === 0 ? { numDeletedRows: 0n } : await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveryIds).executeTakeFirst();
    const deliveries: { last_attempt_at?: number | null }[] = [];
    for (const [projectId, keys] of Map.groupBy(deliveryKeys, (row) => row.project_id)) {
      deliveries.push(...(await deleteDeliveries(trx, projectId, keys.map((row) => row.id))));
    }
    const events = await trx.deleteFrom('message_events').where('message_id', 'in', ids).executeTakeFirst();
    const replies = await trx.deleteFrom('message_replies').where('message_id', 'in', ids).executeTakeFirst();
    const sandbox = await trx.deleteFrom('sandbox_submissions').where('message_id', 'in', ids).executeTakeFirst();
    const messages = await trx.deleteFrom('messages').where('id', 'in', ids).executeTakeFirst();
    return {
      messages: rows(messages),
      message_events: rows(events),
      message_replies: rows(replies),
      webhook_deliveries: deliveries.length,
      webhook_attempts: rows(attempts) + latestAttempts(deliveries),
      sandbox_submissions: rows(sandbox),
    };
  });
  return { deleted, scanned: found.length, next };
}

/**
 * One step of one project's webhook deliveries past retention (payloads and attempts), whatever
 * they are about: up to `limit` made before the cutoff, in id order; the finished ones go. Always
 * one project's: deliveries are keyed (project_id, id), with no ordered index of ids alone
 * (migrations 0014_keyed_by_project, 0026_deliveries_by_key).
 */
export async function purgeDeliveriesStep(db: Db, bounds: PassBounds & { projectId: string }): Promise<Step> {
  const dialect = dialectOf(db);
  // Ids as stored (deliveryIds.ts): the time bound encoded; the cursor, an id this pass returned
  // ('' to start), as stored, so the walk goes on in the stored order.
  const found = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'due_at', 'updated_at'])
    .where('project_id', '=', bounds.projectId)
    .where('id', '<', below(deliveryIdBound(db, uuid7LowerBound(bounds.cutoff)).bound as string, bounds.idsBelow))
    .where('id', '>', storedDeliveryId(db, bounds.after) as string)
    .orderBy('id')
    .limit(bounds.limit)
    .execute();
  const next = found.length < bounds.limit ? undefined : deliveryIdOf(found.at(-1)!.id as StoredId);
  const finished = found.filter((d) => d.due_at === null && d.updated_at < bounds.cutoff).map((d) => d.id);
  if (finished.length === 0) return { deleted: {}, scanned: found.length, next };

  const deleted = await db.transaction().execute(async (trx) => {
    await unsyncedCommit(trx);
    let still = trx
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('project_id', '=', bounds.projectId)
      .where('id', 'in', finished)
      .where('due_at', 'is', null)
      .orderBy('id');
    if (dialect === 'postgres') still = still.forUpdate().skipLocked();
    const ids = (await still.execute()).map((row) => row.id);
    if (ids.length === 0) return {};
    const attempts = await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).executeTakeFirst();
    const deliveries = await deleteDeliveries(trx, bounds.projectId, ids);
    return { webhook_deliveries: deliveries.length, webhook_attempts: rows(attempts) + latestAttempts(deliveries) };
  });
  return { deleted, scanned: found.length, next };
}

/** Deletes one project's deliveries by key (a step's few), returning whether each held its latest attempt. */
async function deleteDeliveries(trx: Db, projectId: string, ids: readonly string[]): Promise<{ last_attempt_at?: number | null }[]> {
  return trx
    .deleteFrom('webhook_deliveries')
    .where('project_id', '=', projectId)
    .where('id', 'in', [...ids])
    .returning('last_attempt_at')
    .execute();
}

/** The attempts deleted with their deliveries: each delivery row holds its latest (migration 0023). */
function latestAttempts(deliveries: readonly { last_attempt_at?: number | null }[]): number {
  return deliveries.filter((delivery) => delivery.last_attempt_at !== null && delivery.last_attempt_at !== undefined).length;
}

/** One step of batches created before the cutoff whose messages are all gone. */
export async function purgeBatchesStep(db: Db, bounds: PassBounds): Promise<Step> {
  let candidates = db
    .selectFrom('batches')
    .select('id')
    .where('id', '<', idLowerBound('bat', bounds.cutoff))
    .where('id', '>', bounds.after);
  if (bounds.projectId !== undefined) candidates = candidates.where('project_id', '=', bounds.projectId);
  const found = await candidates.orderBy('id').limit(bounds.limit).execute();
  const next = found.length < bounds.limit ? undefined : found.at(-1)!.id;
  if (found.length === 0) return { deleted: {}, scanned: 0, next };
  const result = await db
    .deleteFrom('batches')
    .where(
      'id',
      'in',
      found.map((row) => row.id),
    )
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('messages').select('messages.id').whereRef('messages.batch_id', '=', 'batches.id'))),
    )
    .executeTakeFirst();
  return { deleted: { batches: rows(result) }, scanned: found.length, next };
}

/**
 * One step of rows of a table with a time-sortable id that simply age out: the oldest `limit`
 * made before the cutoff. No cursor: every row below the bound goes.
 */
export async function purgeAgedStep(
  db: Db,
  kind: 'sandbox_submissions' | 'template_status_events',
  bounds: Omit<PassBounds, 'after' | 'projectId'>,
): Promise<Step> {
  const bound = idLowerBound(kind === 'sandbox_submissions' ? 'att' : 'tse', bounds.cutoff);
  const oldest = db.selectFrom(kind).select('id').where('id', '<', bound).orderBy('id').limit(bounds.limit);
  // Both engines: the subquery is materialised first (MySQL's restriction does not apply here).
  const result = await db.deleteFrom(kind).where('id', 'in', oldest).executeTakeFirst();
  const deleted = rows(result);
  return { deleted: { [kind]: deleted }, scanned: deleted, next: deleted < bounds.limit ? undefined : '' };
}

/** Projects that set a retention of their own (few: a scan of projects is fine once a run). */
export async function projectsWithOwnRetention(
  db: Db,
): Promise<{ id: string; message_retention_ms: number | null; webhook_delivery_retention_ms: number | null }[]> {
  return db
    .selectFrom('projects')
    .select(['id', 'message_retention_ms', 'webhook_delivery_retention_ms'])
    .where((eb) => eb.or([eb('message_retention_ms', 'is not', null), eb('webhook_delivery_retention_ms', 'is not', null)]))
    .orderBy('id')
    .execute() as Promise<{ id: string; message_retention_ms: number | null; webhook_delivery_retention_ms: number | null }[]>;
}

/** The next `limit` project ids after `after`, for passes that go project by project. */
export async function projectIdsAfter(db: Db, after: string, limit: number): Promise<string[]> {
  const found = await db.selectFrom('projects').select('id').where('id', '>', after).orderBy('id').limit(limit).execute();
  return found.map((row) => row.id);
}

export interface CountsWindow {
  /** Hourly rows in [from, to) are rolled up into one row per day (`to` is a day start). */
  from: number;
  to: number;
  /** Rows (hourly or daily) before this day start are past the analytics retention. */
  expireBefore: number;
  limit: number;
}

/**
 * One step of one project's counters: up to `limit` hourly rows of whole past days are folded
 * into their day's row (hour = the day's start), totals unchanged, and up to `limit` rows past
 * the analytics retention go. Returns whether more remain for this project.
 */
export async function compactCountsStep(
  db: Db,
  projectId: string,
  window: CountsWindow,
): Promise<{ deleted: PurgedCounts; more: boolean }> {
  const dialect = dialectOf(db);
  return db.transaction().execute(async (trx) => {
    await unsyncedCommit(trx);
    let hourly = trx
      .selectFrom('message_counts')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('hour', '>=', window.from)
      .where('hour', '<', window.to)
      .where(sql<boolean>`hour % ${sql.lit(DAY_MS)} <> 0`)
      .orderBy('hour')
      .orderBy('status')
      .orderBy('template')
      .orderBy('language')
      .limit(window.limit);
    if (dialect === 'postgres') hourly = hourly.forUpdate();
    const found = await hourly.execute();
    const byDay = new Map<string, { hour: number; status: string; template: string; language: string; count: number }>();
    for (const row of found) {
      const day = row.hour - (row.hour % DAY_MS);
      const key = JSON.stringify([day, row.status, row.template, row.language]);
      const total = byDay.get(key);
      if (total) total.count += Number(row.count);
      else byDay.set(key, { hour: day, status: row.status, template: row.template, language: row.language, count: Number(row.count) });
    }
    await deleteCountRows(trx, projectId, found);
    // In key order, as every writer of counters upserts: no two transactions wait in a cycle.
    const days = [...byDay.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    for (let i = 0; i < days.length; i += 500) {
      await trx
        .insertInto('message_counts')
        .values(days.slice(i, i + 500).map((row) => ({ project_id: projectId, ...row })))
        .onConflict((oc) =>
          oc.columns(['project_id', 'hour', 'status', 'template', 'language']).doUpdateSet({ count: sql`message_counts.count + excluded.count` }),
        )
        .execute();
    }
    const expired = trx
      .selectFrom('message_counts')
      .select(['hour', 'status', 'template', 'language'])
      .where('project_id', '=', projectId)
      .where('hour', '<', window.expireBefore)
      .orderBy('hour')
      .limit(window.limit);
    const old = await expired.execute();
    await deleteCountRows(trx, projectId, old);
    return {
      deleted: { message_counts_rolled_up: found.length, message_counts: old.length },
      more: found.length === window.limit || old.length === window.limit,
    };
  });
}

// --- the purge's lease and bookkeeping (retention_state) ---

/**
 * Takes the purge for `holder` when a run is due and no other process holds it (or its lease
 * ran out); returns the hour the counters are rolled up through, or undefined when not taken.
 */
export async function takePurgeLease(db: Db, holder: string, now: number, leaseMs: number): Promise<number | undefined> {
  const taken = await db
    .updateTable('retention_state')
    .set({ holder, lease_expires_at: now + leaseMs })
    .where('name', '=', 'purge')
    .where('next_run_at', '<=', now)
    .where((eb) => eb.or([eb('lease_expires_at', '<=', now), eb('holder', '=', holder)]))
    .returning('counts_rolled_up_through')
    .executeTakeFirst();
  return taken === undefined ? undefined : Number(taken.counts_rolled_up_through);
}

/** Extends the lease of a run in progress; false when another process has taken it over. */
export async function renewPurgeLease(db: Db, holder: string, now: number, leaseMs: number): Promise<boolean> {
  const result = await db
    .updateTable('retention_state')
    .set({ lease_expires_at: now + leaseMs })
    .where('name', '=', 'purge')
    .where('holder', '=', holder)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Ends a run: the lease is released and the next run is due at `nextRunAt`. */
export async function finishPurge(db: Db, holder: string, nextRunAt: number, countsRolledUpThrough: number): Promise<void> {
  await db
    .updateTable('retention_state')
    .set({ holder: null, lease_expires_at: 0, next_run_at: nextRunAt, counts_rolled_up_through: countsRolledUpThrough })
    .where('name', '=', 'purge')
    .where('holder', '=', holder)
    .execute();
}

// --- the project's own retention ---

export async function setProjectRetention(
  db: Db,
  projectId: string,
  retention: { message_retention_ms: number | null; webhook_delivery_retention_ms: number | null },
  now: number,
): Promise<void> {
  await db.updateTable('projects').set({ ...retention, updated_at: now }).where('id', '=', projectId).execute();
}

export async function findProjectRetention(
  db: Db,
  projectId: string,
): Promise<{ message_retention_ms: number | null; webhook_delivery_retention_ms: number | null } | undefined> {
  const row = await db
    .selectFrom('projects')
    .select(['message_retention_ms', 'webhook_delivery_retention_ms'])
    .where('id', '=', projectId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return { message_retention_ms: row.message_retention_ms ?? null, webhook_delivery_retention_ms: row.webhook_delivery_retention_ms ?? null };
}

// --- SQLite: giving the freed pages back to the file system ---

/** Whether the file hands freed pages back to the file system, step by step (SQLite's incremental auto-vacuum; never on PostgreSQL, whose VACUUM is its own). */
export async function returnsFreedPages(db: Db): Promise<boolean> {
  if (dialectOf(db) !== 'sqlite') return false;
  const mode = await sql<{ auto_vacuum: number }>`pragma auto_vacuum`.execute(db);
  return Number(mode.rows[0]?.auto_vacuum) === 2;
}

/**
 * After an unsynced step: SQLite copies committed pages from the WAL into the database file,
 * waiting for no one, so the cost is the step's; nothing to do on PostgreSQL.
 */
export async function checkpointAfterStep(db: Db): Promise<void> {
  if (dialectOf(db) === 'sqlite') await sql`pragma wal_checkpoint(passive)`.execute(db);
}

/** Frees up to `pages` free pages at the end of the file; returns how many free pages remain (SQLite, with returnsFreedPages). */
export async function vacuumStep(db: Db, pages: number): Promise<number> {
  await sql`pragma ${sql.raw(`incremental_vacuum(${Math.max(1, Math.floor(pages))})`)}`.execute(db);
  const free = await sql<{ freelist_count: number }>`pragma freelist_count`.execute(db);
  return Number(free.rows[0]?.freelist_count ?? 0);
}

/**
 * Switches a SQLite file made before incremental auto-vacuum to it: one full VACUUM, which
 * rewrites the file and holds it exclusively meanwhile (run with the service stopped:
 * `svc migrate --vacuum`). Returns false when it already was, undefined on PostgreSQL (nothing to switch).
 */
export async function enableIncrementalVacuum(db: Db): Promise<boolean | undefined> {
  if (dialectOf(db) !== 'sqlite') return undefined;
  if (await returnsFreedPages(db)) return false;
  await sql`pragma auto_vacuum = incremental`.execute(db);
  await sql`vacuum`.execute(db);
  return true;
}

export type OwnRetention = Awaited<ReturnType<typeof projectsWithOwnRetention>>[number];

/** One pass of the purge over messages or deliveries: rows past `cutoff`, of one project or (messages) of all. */
export type PurgeScope =
  | { pass: 'messages'; cutoff: number; projectId?: string }
  | { pass: 'webhook_deliveries'; cutoff: number; projectId: string };

/**
 * The passes over messages and webhook deliveries, in order, given each kind's cutoff for a project
 * (undefined: the operator's retention). Deliveries are keyed (project_id, id), with no ordered
 * index on id alone (migrations 0014_keyed_by_project, 0026_deliveries_by_key), and so are
 * messages on PostgreSQL: those passes walk one project's oldest rows at a time, each project with
 * its own retention or the operator's. SQLite's messages: the operator's retention for everyone,
 * then each project's shorter one on its own rows.
 */
export async function* purgeScopes(
  db: Db,
  own: readonly OwnRetention[],
  cutoffs: { messages(project: OwnRetention | undefined): number; deliveries(project: OwnRetention | undefined): number },
  projectsPerStep: number,
): AsyncGenerator<PurgeScope> {
  const postgres = dialectOf(db) === 'postgres';
  if (!postgres) {
    yield { pass: 'messages', cutoff: cutoffs.messages(undefined) };
    for (const project of own) {
      if (project.message_retention_ms === null) continue;
      yield { pass: 'messages', cutoff: cutoffs.messages(project), projectId: project.id };
    }
  }
  const ownById = new Map(own.map((project) => [project.id, project]));
  for (let afterProject = ''; ; ) {
    const projects = await projectIdsAfter(db, afterProject, projectsPerStep);
    for (const projectId of projects) {
      const project = ownById.get(projectId);
      if (postgres) yield { pass: 'messages', cutoff: cutoffs.messages(project), projectId };
      yield { pass: 'webhook_deliveries', cutoff: cutoffs.deliveries(project), projectId };
    }
    if (projects.length < projectsPerStep) break;
    afterProject = projects.at(-1)!;
  }
}

/** Deletes these counter rows of the project, each by its primary key. */
async function deleteCountRows(
  trx: Db,
  projectId: string,
  rows: readonly { hour: number; status: string; template: string; language: string }[],
): Promise<void> {
  for (const row of rows) {
    await trx
      .deleteFrom('message_counts')
      .where('project_id', '=', projectId)
      .where('hour', '=', row.hour)
      .where('status', '=', row.status)
      .where('template', '=', row.template)
      .where('language', '=', row.language)
      .execute();
  }
}
