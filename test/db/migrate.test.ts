import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { openDatabase } from '../../src/db/database.ts';
import { isSchemaCurrent, migrateToLatest, SchemaError } from '../../src/db/migrate.ts';
import { LEGACY_NAMES, migrations } from '../../src/db/migrations/index.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';

describe('migration names', () => {
  it('are numbered strictly: 0001, 0002, … in order, without a gap or a repeat', () => {
    const names = Object.keys(migrations);
    names.forEach((name, i) => assert.match(name, new RegExp(`^${String(i + 1).padStart(4, '0')}_[a-z0-9_]+$`), name));
    assert.deepEqual([...names].sort(), names);
    for (const [old, now] of LEGACY_NAMES) assert.ok(now in migrations && !(old in migrations), `${old} → ${now}`);
  });
});

for (const kind of databaseKinds()) {
  describe(`migrations (${kind})`, () => {
    it('run once on a fresh database, and again is a no-op', async () => {
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        assert.equal(await isSchemaCurrent(database.db), false);
        assert.deepEqual(await migrateToLatest(database.db), Object.keys(migrations));
        assert.deepEqual(await migrateToLatest(database.db), []);
        assert.equal(await isSchemaCurrent(database.db), true);
      } finally {
        await database.close();
        await testDb.drop();
      }
    });

    it('a database migrated under the old, unordered names upgrades without running anything twice', async () => {
      // As main left a database on 26 Nov 2026: the migrations it had (those that had old names,
      // the first 18) run by Kysely itself and recorded under their old names, in the order they
      // ran (0009_sending, written beside the others, run last). Every later one is new to it.
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        const { db } = database;
        const names = Object.keys(migrations);
        const had = names.slice(0, names.indexOf('0018_retention') + 1);
        const schema =
          kind === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]!.schema : undefined;
        const then = new Migrator({
          db: db as Kysely<unknown>,
          migrationTableSchema: schema,
          migrationTableName: 'svc_migrations',
          migrationLockTableName: 'svc_migrations_lock',
          provider: { getMigrations: async () => Object.fromEntries(had.map((name) => [name, migrations[name]!])) },
        });
        assert.equal((await then.migrateToLatest()).error, undefined);
        const oldName = new Map([...LEGACY_NAMES].map(([old, now]) => [now, old]));
        const oldNames = had.map((name) => oldName.get(name) ?? name);
        const ranInOrder = [...oldNames.filter((name) => name !== '0009_sending'), '0009_sending'];
        for (const [i, old] of ranInOrder.entries()) {
          const name = LEGACY_NAMES.get(old) ?? old;
          await sql`update svc_migrations set name = ${old}, timestamp = ${new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString()} where name = ${name}`.execute(db);
        }
        assert.ok(ranInOrder.indexOf('0009_sending') > ranInOrder.indexOf('0010_message_counts'));
        assert.equal(await isSchemaCurrent(db), false);

        assert.deepEqual(await migrateToLatest(db), names.slice(had.length));
        assert.equal(await isSchemaCurrent(db), true);
        const recorded = (await sql<{ name: string }>`select name from svc_migrations order by timestamp, name`.execute(db)).rows.map((row) => row.name);
        assert.deepEqual(recorded, names);
        assert.deepEqual(await migrateToLatest(db), []);
      } finally {
        await database.close();
        await testDb.drop();
      }
    });

    it('refuse a database migrated by newer code', async () => {
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        await migrateToLatest(database.db);
        await sql`insert into svc_migrations (name, timestamp) values ('9999_from_the_future', '2030-01-01')`.execute(
          database.db,
        );
        await assert.rejects(migrateToLatest(database.db), (error: Error) => {
          assert.ok(error instanceof SchemaError);
          assert.match(error.message, /newer than this version of svc.*9999_from_the_future/);
          return true;
        });
        assert.equal(await isSchemaCurrent(database.db), false);
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}
