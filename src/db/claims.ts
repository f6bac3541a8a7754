import { sql } from 'kysely';
import type { Db, DialectName } from './database.ts';
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
  dialect: DialectName,
  table: T,
  options: ClaimOptions,
): Promise<Tables[T][]> {
  const due = sql.ref(options.dueColumn ?? 'due_at');
  const lockClause = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const result = await sql<Tables[T]>`
    update ${sql.table(table)} set lease_expires_at = ${options.now + options.leaseMs}
    where id in (
      select id from ${sql.table(table)}
      where ${due} <= ${options.now} and (lease_expires_at is null or lease_expires_at <= ${options.now})
      order by ${due}
      limit ${options.limit}
      ${lockClause}
    )
    returning *`.execute(db);
  return result.rows;
}

/** When the next row falls due (or its lease runs out), for a worker deciding how long to sleep. */
export async function nextDueAt(db: Db, table: QueueTable, dueColumn: DueColumn = 'due_at'): Promise<number | undefined> {
  const due = sql.ref(dueColumn);
  const result = await sql<{ next: number | string | null }>`
    select min(case when lease_expires_at > ${due} then lease_expires_at else ${due} end) as next
    from ${sql.table(table)} where ${due} is not null`.execute(db);
  const next = result.rows[0]?.next;
  return next === null || next === undefined ? undefined : Number(next);
}
