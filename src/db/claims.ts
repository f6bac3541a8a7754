import { type RawBuilder, sql } from 'kysely';
import type { Db } from './database.ts';
import { dialectOf } from './prepared.ts';
import type { Tables } from './tables.ts';

// The queue operations every work table shares. A row is due when its due column is at or
// before now and it holds no live lease. Claiming sets a lease: a worker that dies mid-batch
// loses its claims when the lease expires, and another worker takes them over.

type QueueTable = 'messages' | 'webhook_deliveries' | 'templates' | 'sandbox_reports';
type DueColumn = 'due_at' | 'review_due_at';

export interface ClaimOptions {
  now: number;
  limit: number;
  leaseMs: number;
  dueColumn?: DueColumn;
}

/**
 * Claims up to `limit` due rows, oldest due first, and returns them. On PostgreSQL concurrent
 * workers skip each other's locked rows (FOR UPDATE SKIP LOCKED), so no row is claimed twice;
 * SQLite has a single writer, so the statement alone is atomic.
 */
export async function claimDue<T extends QueueTable>(
  db: Db,
  table: T,
  options: ClaimOptions,
): Promise<Tables[T][]> {
  const due = sql.ref(options.dueColumn ?? 'due_at');
  const t = sql.table(table);
  const candidates = sql`
      select id from ${t}
      where ${due} <= ${options.now} and (lease_expires_at is null or lease_expires_at <= ${options.now})
      order by ${due}
      limit ${options.limit}`;
  const leaseEnd = options.now + options.leaseMs;
  // PostgreSQL: the candidates as an array, computed once, then each row by its primary key. As
  // `id in (…)` the planner joined the candidates to a sequential scan of the whole table (and,
  // with statistics taken while the queue was empty, re-ran the locking subquery per row: a
  // sandbox report queue of 38,000 rows stalled for minutes): every claim cost O(queue).
  const result =
    dialectOf(db) === 'postgres'
      ? await sql<Tables[T]>`
    update ${t} set lease_expires_at = ${leaseEnd}
    where id = any(array(${candidates} for update skip locked))
    returning *`.execute(db)
      : await sql<Tables[T]>`
    update ${t} set lease_expires_at = ${leaseEnd}
    where id in (${candidates})
    returning *`.execute(db);
  return result.rows;
}

/**
 * When the next row falls due (or its lease runs out), for a worker deciding how long to sleep:
 * the earliest due time of a row free to claim, or the earliest end of a lease held past its due
 * time (a leased row is claimable again only then). Each is an index seek (the due index; the
 * partial index of leased rows), not a scan: this runs after every batch.
 */
export async function nextDueAt(db: Db, table: QueueTable, dueColumn: DueColumn = 'due_at'): Promise<number | undefined> {
  const due = sql.ref(dueColumn);
  const t = sql.table(table);
  const result = await sql<{ free: number | string | null; leased: number | string | null }>`
    select
      (select ${due} from ${t} where ${due} is not null and (lease_expires_at is null or lease_expires_at <= ${due})
       order by ${due} limit 1) as free,
      (select min(lease_expires_at) from ${t} where lease_expires_at is not null and ${due} is not null
       and lease_expires_at > ${due}) as leased`.execute(db);
  const times = [result.rows[0]?.free, result.rows[0]?.leased].filter((time) => time !== null && time !== undefined).map(Number);
  return times.length === 0 ? undefined : Math.min(...times);
}

// Fair queues. messages and webhook_deliveries are queues with a slice per project (the partial
// index (project_id, due_at) where due_at is not null). Workers serve projects, not the global
// head of the queue, so one project's backlog never stands in front of another project's work.
// A claimed row's due_at moves to the end of its lease: it leaves the due range at once (claims
// never walk rows in flight), and comes back by itself if its worker dies.

export type ProjectQueueTable = 'messages' | 'webhook_deliveries';

export interface QueuedProject {
  projectId: string;
  /** When the project's next row falls due (a leased row: when its lease ends). */
  nextDueAt: number;
}

/**
 * Every project with queued rows, and when each one's head falls due: a loose index scan, two
 * index seeks per project with work, however long anyone's backlog is.
 */
export async function queuedProjects(db: Db, table: ProjectQueueTable): Promise<QueuedProject[]> {
  const t = sql.table(table);
  const result = await sql<{ project_id: string; next_due: number | string }>`
    with recursive active(project_id) as (
      select (select project_id from ${t} where due_at is not null order by project_id limit 1)
      union all
      select (select q.project_id from ${t} q
              where q.due_at is not null and q.project_id > a.project_id order by q.project_id limit 1)
      from active a where a.project_id is not null
    )
    select a.project_id,
      (select q.due_at from ${t} q where q.project_id = a.project_id and q.due_at is not null
       order by q.due_at limit 1) as next_due
    from active a where a.project_id is not null`.execute(db);
  return result.rows.map((row) => ({ projectId: row.project_id, nextDueAt: Number(row.next_due) }));
}

/**
 * Up to `limit` projects with queued rows, in project id order, after `after` ('' for the first),
 * and when each one's head falls due: a page of queuedProjects, so a worker reads the projects a
 * page at a time (workers/projectRotation.ts), never all of them in one turn.
 */
export async function queuedProjectsAfter(db: Db, table: ProjectQueueTable, after: string, limit: number): Promise<QueuedProject[]> {
  const t = sql.table(table);
  const result = await sql<{ project_id: string; next_due: number | string }>`
    with recursive active(project_id, n) as (
      select (select project_id from ${t} where due_at is not null and project_id > ${after} order by project_id limit 1), 1
      union all
      select (select q.project_id from ${t} q
              where q.due_at is not null and q.project_id > a.project_id order by q.project_id limit 1), a.n + 1
      from active a where a.project_id is not null and a.n < ${limit}
    )
    select a.project_id,
      (select q.due_at from ${t} q where q.project_id = a.project_id and q.due_at is not null
       order by q.due_at limit 1) as next_due
    from active a where a.project_id is not null`.execute(db);
  return result.rows.map((row) => ({ projectId: row.project_id, nextDueAt: Number(row.next_due) }));
}

/** Projects named in one SQLite claim statement (a JSON array parameter). */
const SQLITE_PROJECTS_PER_CLAIM = 500;

export interface HeadClaim {
  now: number;
  leaseMs: number;
  /** Project id → how many of its due rows to claim at most. */
  quotas: ReadonlyMap<string, number>;
  /** A further condition on the candidate rows (alias `q`), e.g. an ordering rule. */
  where?: RawBuilder<unknown>;
}

/**
 * Claims, for each project, up to its quota of due rows, oldest due first, under a lease, in one
 * transaction: all of the claim or none of it, so a failed claim leaves no row leased behind the
 * caller's back. Rows are updated by their key (project_id, id): webhook deliveries have no index
 * of ids alone. PostgreSQL does it in one statement (a lateral join per project, SKIP LOCKED so
 * concurrent workers never claim a row twice); SQLite has one writer, so a statement per distinct
 * quota, a few index seeks per project, under one commit — autocommitted, a hundred heads were a
 * hundred commits in one turn of the event loop (issue 24). The transaction awaits nothing but its own
 * statements, so it holds the writer no longer than they take; inside Database.withoutSync (the
 * dispatcher) its one commit is not synced, as each of the hundred was not.
 */
export async function claimProjectHeads<T extends ProjectQueueTable>(
  db: Db,
  table: T,
  claim: HeadClaim,
): Promise<Tables[T][]> {
  if (claim.quotas.size === 0) return [];
  const dialect = dialectOf(db);
  const t = sql.table(table);
  const leaseEnd = claim.now + claim.leaseMs;
  const extra = claim.where ? sql`and ${claim.where}` : sql``;
  if (dialect === 'postgres') {
    const projects = [...claim.quotas.keys()];
    const quotas = [...claim.quotas.values()];
    const claimIn = async (trx: Db) => {
      // Walk each project's (project_id, due_at) index and stop after its quota. A queue's
      // statistics lag behind a burst (analyzed while nearly empty), and the planner then reads
      // every due row of the project, tests `where` on each (a subquery for webhooks) and sorts
      // them: measured at 150 ms a claim with 10,000 due deliveries, against about 1 ms.
      await sql`select set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true)`.execute(trx);
      const result = await sql<Tables[T]>`
        update ${t} set due_at = ${leaseEnd}, lease_expires_at = ${leaseEnd}
        where (project_id, id) in (
          select w.project_id, c.id from unnest(${projects}::text[], ${quotas}::int[]) as w(project_id, quota)
          cross join lateral (
            select q.id from ${t} q
            where q.project_id = w.project_id and q.due_at is not null and q.due_at <= ${claim.now} ${extra}
            order by q.due_at limit w.quota
            for update skip locked
          ) c
        )
        returning *`.execute(trx);
      return result.rows;
    };
    return db.isTransaction ? claimIn(db) : db.transaction().execute(claimIn);
  }
  // SQLite: one statement per distinct quota (a deal gives most projects the same one), the
  // projects as a JSON array. A statement per project cost ≈ 125 µs of which SQLite's own work for
  // a one-row head is ≈ 35 µs: at 3,000 tenants with a message each, most of a webhook burst's
  // claim time (bench/README, "Claims of many projects in one statement").
  const claimEach = async (trx: Db) => {
    const rows: Tables[T][] = [];
    const byQuota = Map.groupBy([...claim.quotas].filter(([, quota]) => quota > 0), ([, quota]) => quota);
    for (const [quota, entries] of byQuota) {
      for (let i = 0; i < entries.length; i += SQLITE_PROJECTS_PER_CLAIM) {
        const projects = JSON.stringify(entries.slice(i, i + SQLITE_PROJECTS_PER_CLAIM).map(([projectId]) => projectId));
        // For each project (w), its heads (the queue index, in due order, up to the quota), found
        // by key (c): SQLite's LIMIT cannot name an outer column, hence the quota as a constant.
        const result = await sql<Tables[T]>`
          update ${t} set due_at = ${leaseEnd}, lease_expires_at = ${leaseEnd}
          where (project_id, id) in (
            select w.value, c.id from json_each(${projects}) w
            join ${t} c on c.project_id = w.value and c.id in (
              select q.id from ${t} q
              where q.project_id = w.value and q.due_at is not null and q.due_at <= ${claim.now} ${extra}
              order by q.due_at limit ${quota}))
          returning *`.execute(trx);
        rows.push(...result.rows);
      }
    }
    return rows;
  };
  return db.isTransaction ? claimEach(db) : db.transaction().execute(claimEach);
}

/**
 * Moves the lease of rows this worker still holds: extends it (renewal), or gives the rows back
 * (`leaseEnd` null, due at `dueAt`). Only rows whose lease is still `currentLeaseEnd` are moved:
 * a row whose lease ran out and was claimed by another worker is no longer ours. Rows are locked
 * in id order on PostgreSQL, as the outcome recorder locks them, so the two never deadlock.
 * Webhook deliveries are moved with their project named (`projectId`, all of one project).
 * Returns the ids moved.
 */
export async function moveLeases(
  db: Db,
  table: ProjectQueueTable,
  ids: readonly string[],
  currentLeaseEnd: number,
  to: { dueAt: number; leaseEnd: number | null },
  projectId?: string,
): Promise<string[]> {
  const dialect = dialectOf(db);
  const moved: string[] = [];
  const t = sql.table(table);
  // Named, the project makes the rows' key: webhook deliveries have no index of ids alone.
  const ofProject = projectId === undefined ? sql`` : sql`project_id = ${projectId} and`;
  for (let i = 0; i < ids.length; i += 1000) {
    const chunk = ids.slice(i, i + 1000);
    const lock = dialect === 'postgres' ? sql`order by id for update` : sql``;
    const result = await sql<{ id: string }>`
      update ${t} set due_at = ${to.dueAt}, lease_expires_at = ${to.leaseEnd}
      where ${ofProject} id in (select id from ${t} where ${ofProject} id in (${sql.join(chunk)}) and lease_expires_at = ${currentLeaseEnd} ${lock})
      returning id`.execute(db);
    moved.push(...result.rows.map((row) => row.id));
  }
  return moved;
}

/** How many rows of a queue are due or in flight: a count over the queue's partial index. */
export async function queueDepth(db: Db, table: ProjectQueueTable): Promise<number> {
  const count = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where due_at is not null`.execute(db);
  return Number(count.rows[0]?.n ?? 0);
}
