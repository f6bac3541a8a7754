import { sql } from 'kysely';
import { idLowerBound, idTime } from '../domain/ids.ts';
import { uuid7LowerBound } from '../domain/uuid7.ts';
import type { Db } from './database.ts';
import { dialectOf } from './prepared.ts';
import { DAY_MS } from './retention.ts';

// PostgreSQL's time partitions (migration 0028): the purge of a whole period is a DROP of its
// partitions, whatever they hold, instead of a delete of every row (README, "Data retention").
//
// A family is a table and the table of its children, partitioned with the same bounds by the
// same time-sortable key: messages by id and their status events by message id; webhook
// deliveries by id and their attempts by delivery id. Periods are made ahead of time (a period's
// partitions exist before its first row); a key no period covers yet lands in the default
// partition, and moves into its period when that is made. A period goes when it has ended before
// the cutoff, every row in it is past retention and nothing in it is in flight; until it has
// ended, the batched purge of the operator's retention leaves its rows alone (batchedPurgeBelow);
// a period that stays past its end has its finished rows removed by the batched purge, which also
// does every project's shorter retention wherever its rows are.

export interface Family {
  name: 'messages' | 'webhook_deliveries';
  lead: { table: 'messages' | 'webhook_deliveries'; key: 'id' };
  child: { table: 'message_events' | 'webhook_attempts'; key: 'message_id' | 'delivery_id' };
  /** The smallest key made at or after `ms`. */
  bound(ms: number): string;
  /** The time a bound (or a key) was made at. */
  timeOf(bound: string): number;
}

export const FAMILIES: readonly Family[] = [
  {
    name: 'messages',
    lead: { table: 'messages', key: 'id' },
    child: { table: 'message_events', key: 'message_id' },
    bound: (ms) => idLowerBound('msg', ms),
    timeOf: idTime,
  },
  {
    name: 'webhook_deliveries',
    lead: { table: 'webhook_deliveries', key: 'id' },
    child: { table: 'webhook_attempts', key: 'delivery_id' },
    bound: uuid7LowerBound,
    timeOf: (bound) => Number.parseInt(bound.replaceAll('-', '').slice(0, 12).padEnd(12, '0'), 16),
  },
];

/** Whether the database keeps these families in time partitions: PostgreSQL (SQLite purges in batches). */
export function hasTimePartitions(db: Db): boolean {
  return dialectOf(db) === 'postgres';
}

/** A partition's range of keys: `from` undefined for MINVALUE; the default partition has neither. */
export interface Partition {
  name: string;
  from?: string;
  to?: string;
  isDefault: boolean;
}

/**
 * The length of a family's periods for a retention: a quarter of it, between a day and 100 days.
 * A period is dropped at most a quarter of the retention after its last row passed it, and a
 * table holds about seven partitions (the retention's four, the current one, the next and the
 * default one):
 * a statement whose key names no period is planned over every partition, at each execution
 * (bench/partitionPlanning.ts measures what each one costs).
 */
export function periodFor(retentionMs: number): number {
  return Math.min(100 * DAY_MS, Math.max(DAY_MS, Math.floor(retentionMs / 4 / DAY_MS) * DAY_MS));
}

/** How long a lock on a partitioned table may be waited for; past it, the next run tries again. */
const LOCK_TIMEOUT = '500ms';

export async function partitionsOf(db: Db, table: string): Promise<Partition[]> {
  const rows = (
    await sql<{ name: string; bound: string }>`
      select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = ${table}::regclass`.execute(db)
  ).rows;
  return rows
    .map((row) => {
      if (row.bound === 'DEFAULT') return { name: row.name, isDefault: true };
      const range = /^FOR VALUES FROM \((?:'([^']*)'|MINVALUE)\) TO \((?:'([^']*)'|MAXVALUE)\)$/.exec(row.bound);
      if (!range) throw new Error(`unexpected partition bound of ${row.name}: ${row.bound}`);
      return { name: row.name, ...(range[1] !== undefined && { from: range[1] }), ...(range[2] !== undefined && { to: range[2] }), isDefault: false };
    })
    .sort((a, b) => compareBounds(a.to, b.to));
}

/** Bounds compare as PostgreSQL compares the keys (C collation order of ASCII text); undefined is MAXVALUE. */
function compareBounds(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  return a < b ? -1 : 1;
}

/**
 * Makes the family's periods up to `now` + one period (the lead's and the child's partitions of
 * a period in one transaction, so they always share bounds). Returns the partitions made.
 */
export async function makePeriodsAhead(db: Db, family: Family, now: number, periodMs: number): Promise<string[]> {
  const made: string[] = [];
  const horizon = family.bound(now + periodMs);
  for (;;) {
    const ranges = (await partitionsOf(db, family.lead.table)).filter((partition) => !partition.isDefault);
    const from = ranges.at(-1)?.to;
    if (from === undefined || from >= horizon) return made;
    const startMs = family.timeOf(from);
    const to = family.bound((Math.floor(startMs / periodMs) + 1) * periodMs);
    const suffix = new Date(startMs).toISOString().slice(0, 10).replaceAll('-', '');
    try {
      await db.transaction().execute(async (trx) => {
        await sql`set local lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(trx);
        // The default partitions are held (ATTACH checks them anyway): no key reaches them meanwhile.
        const defaults = [family.lead, family.child].map(({ table }) => sql.table(`${table}_default`));
        await sql`lock table ${sql.join(defaults)} in access exclusive mode`.execute(trx);
        for (const { table, key } of [family.lead, family.child]) {
          const name = sql.table(`${table}_${suffix}`);
          const inRange = sql`${sql.id(key)} >= ${from} and ${sql.id(key)} < ${to}`;
          // Made beside the table and attached (CREATE … PARTITION OF would hold the whole table).
          // Keys of the period the default partition took (a clock ahead, a period made late)
          // move into it first: periods stay contiguous.
          await sql`create table ${name} (like ${sql.table(table)} including defaults)`.execute(trx);
          await sql`insert into ${name} select * from only ${sql.table(`${table}_default`)} where ${inRange}`.execute(trx);
          await sql`delete from only ${sql.table(`${table}_default`)} where ${inRange}`.execute(trx);
          await sql`alter table ${sql.table(table)} attach partition ${name} for values from (${sql.lit(from)}) to (${sql.lit(to)})`.execute(trx);
        }
      });
    } catch (error) {
      // Busy past the lock timeout, or made meanwhile by another process: the next run sees.
      if (isLockTimeout(error) || isDuplicateTable(error)) return made;
      throw error;
    }
    made.push(`${family.lead.table}_${suffix}`, `${family.child.table}_${suffix}`);
    // Analyzed: else the planner takes an empty one for ten pages of rows until autovacuum sees it change.
    for (const { table } of [family.lead, family.child]) await sql`analyze ${sql.table(`${table}_${suffix}`)}`.execute(db);
  }
}

export interface DroppedPeriod {
  partitions: [string, string];
  /** Rows dropped: the lead's and the child's. */
  rows: [number, number];
}

/**
 * Where the batched purge of the operator's retention stops for this family: the start of its
 * oldest period not yet ended at `cutoff` (its rows go with it, a period later). Undefined: no
 * such period (then the cutoff alone bounds it). The first partition (`…_before`, the table as
 * it was before 0028) is no period: its rows past retention are purged in batches.
 */
export async function batchedPurgeBelow(db: Db, family: Family, cutoff: number): Promise<string | undefined> {
  const bound = family.bound(cutoff);
  return (await partitionsOf(db, family.lead.table)).find((partition) => !partition.isDefault && partition.from !== undefined && (partition.to === undefined || partition.to > bound))?.from;
}

/** The family's periods that ended before `cutoff` (their upper bound at or below the cutoff's), oldest first. */
export async function periodsEndedBefore(db: Db, family: Family, cutoff: number): Promise<Partition[]> {
  const bound = family.bound(cutoff);
  return (await partitionsOf(db, family.lead.table)).filter((partition) => !partition.isDefault && partition.to !== undefined && partition.to <= bound);
}

/**
 * Drops a period that ended before `cutoff` if none of its rows is to be kept: changed since the
 * cutoff, or in flight (a message QUEUED, leased or with a delivery pending; a delivery pending
 * or leased). Finding out is one sequential read of the lead's partition, no write; work put in
 * flight meanwhile is looked for again under the drop's lock. Returns
 * undefined when the period stays (the batched purge then removes its rows past retention one by
 * one), or when its table was busy past the lock timeout (the next run tries again).
 */
export async function dropPeriod(
  db: Db,
  family: Family,
  period: Partition,
  cutoff: number,
  /** Runs between the read and the drop's transaction (tests: a write racing the drop). */
  afterRead?: () => Promise<void>,
): Promise<DroppedPeriod | undefined> {
  const { from, to } = period as { from?: string; to: string };
  const child = (await partitionsOf(db, family.child.table)).find((partition) => !partition.isDefault && partition.from === from && partition.to === to);
  if (child === undefined) throw new Error(`no partition of ${family.child.table} beside ${period.name}`);

  const keep =
    family.name === 'messages'
      ? sql`status = 'QUEUED' or due_at is not null or lease_expires_at is not null or updated_at >= ${cutoff}`
      : sql`due_at is not null or lease_expires_at is not null or updated_at >= ${cutoff}`;
  const counted = (
    await sql<{ rows: string; kept: string }>`select count(*) as rows, count(*) filter (where ${keep}) as kept from only ${sql.table(period.name)}`.execute(db)
  ).rows[0]!;
  if (Number(counted.kept) > 0) return undefined;
  if (await holdsWorkInFlight(db, family, period)) return undefined;
  const childRows = Number((await sql<{ rows: string }>`select count(*) as rows from only ${sql.table(child.name)}`.execute(db)).rows[0]!.rows);
  await afterRead?.();

  try {
    const dropped = await db.transaction().execute(async (trx) => {
      await sql`set local lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(trx);
      // DROP holds both tables whole (the parents and their default partitions too); taken first,
      // in the order every statement takes them (the table, then its partitions), so the drop
      // waits its turn instead of locking against them. No write reaches the period from here.
      // A write that committed since the read above could have put work in flight again (a late
      // status report queues a webhook; a delivery sent again is due): looked for once more,
      // through the queues' small partial indexes.
      await sql`lock table ${sql.table(family.lead.table)}, ${sql.table(family.child.table)} in access exclusive mode`.execute(trx);
      if (await holdsWorkInFlight(trx, family, period)) return false;
      if (family.name === 'messages') {
        // Rows about the period's messages outside the family: their replies (few).
        let replies = trx.deleteFrom('message_replies').where('message_id', '<', to);
        if (from !== undefined) replies = replies.where('message_id', '>=', from);
        await replies.execute();
      }
      await sql`drop table ${sql.table(period.name)}, ${sql.table(child.name)}`.execute(trx);
      return true;
    });
    if (!dropped) return undefined;
  } catch (error) {
    if (isLockTimeout(error)) return undefined;
    throw error;
  }
  return { partitions: [period.name, child.name], rows: [Number(counted.rows), childRows] };
}

/**
 * Whether a period holds work in flight: a row due (QUEUED, scheduled, retried or leased: a claim
 * sets due_at with its lease) and, for messages, a delivery still pending about one of them. Both
 * through the queues' partial indexes, which hold only such rows.
 */
export async function holdsWorkInFlight(db: Db, family: Family, period: Partition): Promise<boolean> {
  // In the queue index's order: with `limit 1` alone the planner expects a due row early in a
  // scan of the partition, where the due rows are its newest.
  const due = await sql`select 1 from only ${sql.table(period.name)} where due_at is not null order by project_id, due_at limit 1`.execute(db);
  if (due.rows.length > 0) return true;
  if (family.name !== 'messages') return false;
  const { from, to } = period;
  let pending = db.selectFrom('webhook_deliveries').select('message_id').where('due_at', 'is not', null).where('message_id', '<', to!);
  if (from !== undefined) pending = pending.where('message_id', '>=', from);
  return (await pending.limit(1).execute()).length > 0;
}

/** PostgreSQL's duplicate_table: a partition of that name exists. */
function isDuplicateTable(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '42P07';
}

/** PostgreSQL's lock_not_available: a lock not granted within lock_timeout. */
function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '55P03';
}
