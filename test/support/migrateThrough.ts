import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { migrations } from '../../src/db/migrations/index.ts';

/**
 * Runs svc's migrations up to and including `last` (a database as an older svc left it), for the
 * tests of a migration that runs on rows already there. `schema`: PostgreSQL's, as svc names it.
 */
export async function migrateThrough(db: Kysely<unknown>, last: string, schema: string | undefined): Promise<void> {
  const names = Object.keys(migrations);
  const through = names.slice(0, names.indexOf(last) + 1);
  const migrator = new Migrator({
    db,
    migrationTableSchema: schema,
    migrationTableName: 'svc_migrations',
    migrationLockTableName: 'svc_migrations_lock',
    provider: { getMigrations: async () => Object.fromEntries(through.map((name) => [name, migrations[name]!])) },
  });
  const result = await migrator.migrateToLatest();
  assert.equal(result.error, undefined);
}
