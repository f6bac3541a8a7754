import { type DatabaseIntrospector, type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Db } from './database.ts';
import { dialectOf } from './prepared.ts';
import { LEGACY_NAMES, migrations } from './migrations/index.ts';

const MIGRATION_TABLE = 'svc_migrations';
const MIGRATION_LOCK_TABLE = 'svc_migrations_lock';

export class SchemaError extends Error {
  override name = 'SchemaError';
}

// Kysely looks for its tables by schema; on PostgreSQL name ours (the search_path's first), or a
// migration table in another schema of the same database would be taken for ours.
async function migrator(db: Db): Promise<Migrator> {
  const schema =
    dialectOf(db) === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]!.schema
      : undefined;
  return new Migrator({
    db: schema === undefined ? (db as Kysely<unknown>) : withSchemaIntrospection(db as Kysely<unknown>, schema),
    migrationTableSchema: schema,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    // Strictly ordered (migrations/index.ts): a database has run a prefix of the list, and a
    // record out of that order is a corruption Kysely refuses.
    allowUnorderedMigrations: false,
  });
}

/**
 * The migrator asks whether its tables exist by listing every table of every schema with its
 * columns. A database with many schemas (a shared server, a test run: hundreds) made that take
 * about 0.4 s a call, several calls a migration run. This database answers for our schema only.
 */
function withSchemaIntrospection(db: Kysely<unknown>, schema: string): Kysely<unknown> {
  const introspection: DatabaseIntrospector = {
    getSchemas: async () =>
      (await sql<{ name: string }>`select nspname as name from pg_namespace where nspname = ${schema}`.execute(db)).rows,
    getTables: async () =>
      (
        await sql<{ name: string }>`
          select table_name as name from information_schema.tables where table_schema = ${schema}`.execute(db)
      ).rows.map(({ name }) => ({ name, schema, isView: false, isForeign: false, columns: [] })),
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, property, target);
      // Kysely's methods use private fields: call them on the instance itself.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Names of the migrations this database has run, or [] for a fresh database. */
async function appliedMigrations(db: Db): Promise<string[]> {
  try {
    const rows = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(db);
    return rows.rows.map((row) => row.name);
  } catch {
    return []; // no migration table yet
  }
}

function unknownMigrations(applied: string[]): string[] {
  return applied.filter((name) => !(name in migrations));
}

/**
 * A database migrated before the strict numbering has records under the old names (LEGACY_NAMES),
 * each with the time it ran — an order that is not always the new one (migrations were written
 * side by side and ran unordered). Renames them and restamps every record in the new order (from
 * the earliest time recorded, a millisecond apart), in one transaction; nothing runs again. A
 * second process doing the same meanwhile finds nothing left to rename. Returns the names then
 * recorded.
 */
async function renameLegacyMigrations(db: Db, applied: string[]): Promise<string[]> {
  if (!applied.some((name) => LEGACY_NAMES.has(name))) return applied;
  const table = sql.table(MIGRATION_TABLE);
  await db.transaction().execute(async (trx) => {
    const rows = (await sql<{ name: string; timestamp: string }>`select name, timestamp from ${table}`.execute(trx)).rows;
    if (!rows.some((row) => LEGACY_NAMES.has(row.name))) return;
    const start = Math.min(...rows.map((row) => new Date(row.timestamp).getTime()));
    const order = Object.keys(migrations);
    const renamed = rows
      .map((row) => ({ old: row.name, name: LEGACY_NAMES.get(row.name) ?? row.name }))
      .sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
    for (const [i, row] of renamed.entries()) {
      const timestamp = new Date(start + i).toISOString();
      await sql`update ${table} set name = ${row.name}, timestamp = ${timestamp} where name = ${row.old}`.execute(trx);
    }
  });
  return appliedMigrations(db);
}

/** Brings the schema up to date; refuses a database that newer code has migrated. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const applied = await renameLegacyMigrations(db, await appliedMigrations(db));
  const unknown = unknownMigrations(applied);
  if (unknown.length > 0) {
    throw new SchemaError(
      `the database schema is newer than this version of svc (it has ${unknown.join(', ')}); run a newer svc`,
    );
  }
  // Up to date (every start after the first): Kysely's migrator would take its lock and read the
  // catalogue only to find nothing to run.
  if (isCurrent(applied)) return [];
  const { error, results } = await (await migrator(db)).migrateToLatest();
  if (error) throw error;
  return (results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName);
}

/** True when the database has run exactly the migrations this code knows. */
export async function isSchemaCurrent(db: Db): Promise<boolean> {
  return isCurrent(await appliedMigrations(db));
}

function isCurrent(applied: string[]): boolean {
  const known = Object.keys(migrations);
  return applied.length === known.length && known.every((name) => applied.includes(name));
}
