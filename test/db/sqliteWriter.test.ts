import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { isUniqueViolation } from '../../src/db/constraints.ts';
import { statement } from '../../src/db/prepared.ts';
import { withMigratedDatabase, testProjectRow } from '../support/databases.ts';

// Issue #24: SQLite's writer connection lives in a worker thread (src/db/sqliteWriter.ts). What
// callers rely on must hold through it: results, errors as the driver gives them, transactions and
// their rollback, batched writes, withoutSync, and reads on the main thread seeing commits.

const COUNT = statement<{ n: number }>('select count(*) as n from projects');
const INSERT = statement('insert into projects (id, name, owner_email, webhook_secret_enc, created_at, updated_at) values (?, ?, ?, ?, ?, ?)');

describe('SQLite writer thread', () => {
  it('runs statements, returns rows and changes, and the reader sees each commit', async () => {
    await withMigratedDatabase('sqlite', async (database) => {
      await database.db.insertInto('projects').values(testProjectRow('proj_a')).execute();
      const updated = await database.db.updateTable('projects').set({ name: 'renamed' }).where('id', '=', 'proj_a').executeTakeFirst();
      assert.equal(updated.numUpdatedRows, 1n);
      const row = await database.reader.selectFrom('projects').select('name').where('id', '=', 'proj_a').executeTakeFirst();
      assert.equal(row?.name, 'renamed');
      const returned = await database.db.deleteFrom('projects').where('id', '=', 'proj_a').returning('id').execute();
      assert.deepEqual(returned, [{ id: 'proj_a' }]);
    });
  });

  it('gives the driver’s error details back (a unique violation is recognised) and the connection goes on', async () => {
    await withMigratedDatabase('sqlite', async (database) => {
      await database.db.insertInto('projects').values(testProjectRow('proj_a')).execute();
      const error = await database.db.insertInto('projects').values(testProjectRow('proj_a')).execute().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof Error);
      assert.equal((error as { errcode?: number }).errcode, 1555, 'SQLITE_CONSTRAINT_PRIMARYKEY');
      assert.match(error.message, /UNIQUE constraint failed: projects\.id/);
      assert.equal(isUniqueViolation(error, { constraint: 'x', table: 'projects', columns: ['id'] }), false, 'a primary key is not a unique constraint');
      assert.equal((await COUNT.rows(database.db, []))[0]!.n, 1);
    });
  });

  it('rolls a failed transaction back whole', async () => {
    await withMigratedDatabase('sqlite', async (database) => {
      await assert.rejects(
        database.db.transaction().execute(async (trx) => {
          await trx.insertInto('projects').values(testProjectRow('proj_a')).execute();
          await sql`select no_such_function()`.execute(trx);
        }),
        /no such function/,
      );
      assert.equal((await COUNT.rows(database.reader, []))[0]!.n, 0);
    });
  });

  it('runs a batch of one statement in one request, in a transaction, and fails it whole', async () => {
    await withMigratedDatabase('sqlite', async (database) => {
      const rows = Array.from({ length: 50 }, (_, i) => [`proj_${i}`, `P${i}`, 'o@example.com', 'x', 0, 0]);
      await database.db.transaction().execute((trx) => INSERT.executeEach(trx, rows));
      assert.equal((await COUNT.rows(database.reader, []))[0]!.n, 50);
      // The 3rd of these exists: nothing of the batch stays.
      const again = [['proj_new1', 'a', 'o@example.com', 'x', 0, 0], ['proj_new2', 'b', 'o@example.com', 'x', 0, 0], rows[0]!];
      await assert.rejects(database.db.transaction().execute((trx) => INSERT.executeEach(trx, again)), /UNIQUE constraint failed/);
      assert.equal((await COUNT.rows(database.reader, []))[0]!.n, 50);
    });
  });

  it('withoutSync sets synchronous = NORMAL for its work only', async () => {
    await withMigratedDatabase('sqlite', async (database) => {
      const synchronous = async (db: typeof database.db) => Number(Object.values((await sql`pragma synchronous`.execute(db)).rows[0] as object)[0]);
      assert.equal(await synchronous(database.db), 2, 'FULL');
      await database.withoutSync(async (db) => {
        assert.equal(await synchronous(db), 1, 'NORMAL');
      });
      assert.equal(await synchronous(database.db), 2);
    });
  });

  it('refuses statements once closed, and holds no process open', async () => {
    let closedDb: Parameters<Parameters<typeof withMigratedDatabase>[1]>[0] | undefined;
    await withMigratedDatabase('sqlite', async (database) => {
      closedDb = database;
    });
    await assert.rejects(COUNT.rows(closedDb!.db, []));
  });
});
