import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Retention by dropping time partitions (issue 19, requirement 3), PostgreSQL only: the four
// tables that grow with every message become partitioned by range of a time-sortable key, so
// that the purge can drop a period's partition instead of deleting its rows one by one
// (db/partitions.ts makes the periods and drops them):
//
// - messages by id (msg_ + time), and message_events by message_id: a message's events live in
//   the partition of the same period as the message, and go with it;
// - webhook_deliveries by id (a UUIDv7), and webhook_attempts by delivery_id: the same for a
//   delivery and its attempts.
//
// Every primary key already holds its partition key, so no uniqueness is widened. The table as
// it is becomes the first partition, `<table>_before`, for every key before the next UTC midnight
// (or above its newest key, if that is later)
// (its rows are not copied: attaching it reads it once to check the bound); `<table>_default`
// takes any key no period partition covers (a clock far ahead, a period not made in time), so no
// insert ever fails for want of a partition. The parent's indexes and constraints are the ones
// the table had, under the same names (the partition's own are renamed `<table>_before_…`);
// PostgreSQL attaches the partition's equivalent indexes rather than building them again.
// Cost: the catalogue changes, and reads of each table under its lock (its newest key; the
// attach's check of the bound): 1.9 s on a database of 300,000 messages (2.1 million rows in the
// four tables, 897 MB), every statement on the four tables waiting meanwhile. SQLite: nothing to do (its purge stays bounded batches).

const FAMILIES = [
  { tables: [{ table: 'messages', key: 'id' }, { table: 'message_events', key: 'message_id' }], bound: (ms: number) => `msg_${ulidTime(ms)}` },
  { tables: [{ table: 'webhook_deliveries', key: 'id' }, { table: 'webhook_attempts', key: 'delivery_id' }], bound: uuid7Time },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  const day = 86_400_000;
  const tomorrow = (Math.floor(Date.now() / day) + 1) * day;
  for (const { tables, bound } of FAMILIES) {
    // Held until the migration commits: no key is written between the bound's read and the attach.
    await sql`lock table ${sql.table(tables[0].table)}, ${sql.table(tables[1].table)} in access exclusive mode`.execute(db);
    // One bound for the table and its children (they share their periods): above every key
    // either holds, made by whatever clock.
    let before = bound(tomorrow);
    for (const { table, key } of tables) {
      const newest = (await sql<{ key: string | null }>`select max(${sql.id(key)}) as key from ${sql.table(table)}`.execute(db)).rows[0]?.key;
      if (newest !== null && newest !== undefined && newest >= before) before = `${newest}0`;
    }
    for (const { table, key } of tables) await partition(db, table, key, before);
  }
}

async function partition(db: Kysely<unknown>, table: string, key: string, before: string): Promise<void> {
  const indexes = (
    await sql<{ name: string; definition: string }>`
      select indexname as name, indexdef as definition from pg_indexes
      where schemaname = current_schema() and tablename = ${table}`.execute(db)
  ).rows;
  const constraints = (
    await sql<{ name: string; definition: string }>`
      select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint
      where conrelid = ${table}::regclass and contype in ('p', 'u', 'f')`.execute(db)
  ).rows;
  const constraintNames = new Set(constraints.map((constraint) => constraint.name));
  const old = `${table}_before`;
  await sql`alter table ${sql.table(table)} rename to ${sql.table(old)}`.execute(db);
  for (const { name } of constraints) {
    await sql`alter table ${sql.table(old)} rename constraint ${sql.id(name)} to ${sql.id(`${old}_${name}`)}`.execute(db);
  }
  for (const { name } of indexes.filter((index) => !constraintNames.has(index.name))) {
    await sql`alter index ${sql.id(name)} rename to ${sql.id(`${old}_${name}`)}`.execute(db);
  }
  await sql`create table ${sql.table(table)} (like ${sql.table(old)} including defaults) partition by range (${sql.id(key)})`.execute(db);
  await sql`alter table ${sql.table(table)} attach partition ${sql.table(old)} for values from (minvalue) to (${sql.lit(before)})`.execute(db);
  await sql`create table ${sql.table(`${table}_default`)} partition of ${sql.table(table)} default`.execute(db);
  // Empty, it is analyzed now, or the planner takes it for ten pages of rows (autovacuum never
  // analyzes a table that does not change) and sorts whole ranges of the others to merge it in.
  await sql`analyze ${sql.table(`${table}_default`)}`.execute(db);
  for (const { name, definition } of constraints) {
    await sql`alter table ${sql.table(table)} add constraint ${sql.id(name)} ${sql.raw(definition)}`.execute(db);
  }
  for (const { definition } of indexes.filter((index) => !constraintNames.has(index.name))) {
    await sql.raw(definition).execute(db);
  }
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** The 10-character time part of an id made at `ms` (domain/ids.ts, frozen here). */
function ulidTime(ms: number): string {
  let out = '';
  for (let i = 0, rest = ms; i < 10; i++, rest = Math.floor(rest / 32)) out = ALPHABET[rest % 32] + out;
  return out;
}

/** The smallest UUIDv7 text made at or after `ms` (domain/uuid7.ts, frozen here). */
function uuid7Time(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}
