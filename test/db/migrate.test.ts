import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { openDatabase } from '../../src/db/database.ts';
import { isSchemaCurrent, migrateToLatest, SchemaError } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';

for (const kind of databaseKinds()) {
  describe(`migrations (${kind})`, () => {
    it('run once on a fresh database, and again is a no-op', async () => {
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        assert.equal(await isSchemaCurrent(database.db), false);
        assert.deepEqual(await migrateToLatest(database.db, database.dialect), Object.keys(migrations));
        assert.deepEqual(await migrateToLatest(database.db, database.dialect), []);
        assert.equal(await isSchemaCurrent(database.db), true);
      } finally {
        await database.close();
        await testDb.drop();
      }
    });

    it('run a migration written beside later ones that a database already has', async () => {
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        const names = Object.keys(migrations);
        const skipped = names[names.length - 2]!;
        const schema =
          kind === 'postgres'
            ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]!.schema
            : undefined;
        const earlier = new Migrator({
          db: database.db as Kysely<unknown>,
          migrationTableSchema: schema,
          migrationTableName: 'svc_migrations',
          migrationLockTableName: 'svc_migrations_lock',
          provider: { getMigrations: async () => Object.fromEntries(Object.entries(migrations).filter(([name]) => name !== skipped)) },
        });
        assert.equal((await earlier.migrateToLatest()).error, undefined);
        assert.deepEqual(await migrateToLatest(database.db, database.dialect), [skipped]);
        assert.equal(await isSchemaCurrent(database.db), true);
      } finally {
        await database.close();
        await testDb.drop();
      }
    });

    it('refuse a database migrated by newer code', async () => {
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        await migrateToLatest(database.db, database.dialect);
        await sql`insert into svc_migrations (name, timestamp) values ('9999_from_the_future', '2030-01-01')`.execute(
          database.db,
        );
        await assert.rejects(migrateToLatest(database.db, database.dialect), (error: Error) => {
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
