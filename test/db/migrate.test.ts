import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
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
        assert.deepEqual(await migrateToLatest(database.db, database.dialect), Object.keys(migrations));
        assert.deepEqual(await migrateToLatest(database.db, database.dialect), []);
        assert.equal(await isSchemaCurrent(database.db), true);
      } finally {
        await database.close();
        await testDb.drop();
      }
    });

    it('a database migrated under the old, unordered names upgrades without running anything twice', async () => {
      // As main left a database on 26 Nov 2026: the migrations recorded under their old names, in
      // the order they ran (0009_sending, written beside the others, run last), and without
      // 0019, which came after.
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        await migrateToLatest(database.db, database.dialect);
        const { db } = database;
        await sql`delete from svc_migrations where name = '0019_due_deliveries_by_id'`.execute(db);
        await sql`drop index webhook_deliveries_due_by_id`.execute(db);
        await sql`create index webhook_deliveries_pending_by_id on webhook_deliveries (project_id, id) where status = 'pending'`.execute(db);
        // Nor the migrations written after that day (0020_cost), undone.
        await sql`delete from svc_migrations where name = '0020_cost'`.execute(db);
        await sql`drop table cost_reconciliations`.execute(db);
        await sql`drop table message_costs`.execute(db);
        await sql`alter table messages drop column cost`.execute(db);
        const later = ['0019_due_deliveries_by_id', '0020_cost'];
        const oldName = new Map([...LEGACY_NAMES].map(([old, now]) => [now, old]));
        const oldNames = Object.keys(migrations)
          .filter((name) => !later.includes(name))
          .map((name) => oldName.get(name) ?? name);
        const ranInOrder = [...oldNames.filter((name) => name !== '0009_sending'), '0009_sending'];
        for (const [i, old] of ranInOrder.entries()) {
          const name = LEGACY_NAMES.get(old) ?? old;
          await sql`update svc_migrations set name = ${old}, timestamp = ${new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString()} where name = ${name}`.execute(db);
        }
        assert.ok(ranInOrder.indexOf('0009_sending') > ranInOrder.indexOf('0010_message_counts'));
        assert.equal(await isSchemaCurrent(db), false);

        assert.deepEqual(await migrateToLatest(db, database.dialect), later);
        assert.equal(await isSchemaCurrent(db), true);
        const recorded = (await sql<{ name: string }>`select name from svc_migrations order by timestamp, name`.execute(db)).rows.map((row) => row.name);
        assert.deepEqual(recorded, Object.keys(migrations));
        assert.deepEqual(await migrateToLatest(db, database.dialect), []);
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
