import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { GroupCommitter } from '../../src/db/groupCommit.ts';
import { databaseKinds, withMigratedDatabase } from '../support/databases.ts';

for (const kind of databaseKinds()) {
  describe(`group commit (${kind})`, () => {
    it('commits concurrent writes together, and a bad one fails alone', async () => {
      await withMigratedDatabase(kind, async (database) => {
        let transactions = 0;
        const committer = new GroupCommitter<string, string>(database, async (trx, ids) => {
          transactions++;
          await trx
            .insertInto('sandbox_submissions')
            .values(ids.map((id) => ({ id, message_id: 'm', provider_message_id: null, recipient: '+1', outcome: 'x', submitted_at: 0 })))
            .execute();
          return ids;
        });
        const ids = Array.from({ length: 50 }, (_, i) => `s${String(i).padStart(3, '0')}`);
        assert.deepEqual(await Promise.all(ids.map((id) => committer.submit(id))), ids);
        assert.ok(transactions < ids.length, `${transactions} transactions for ${ids.length} writes`);

        // s000 exists already: the batch fails, then each write is retried alone.
        const results = await Promise.allSettled(['t1', 's000', 't2'].map((id) => committer.submit(id)));
        assert.deepEqual(
          results.map((result) => result.status),
          ['fulfilled', 'rejected', 'fulfilled'],
        );
        const rows = await database.db.selectFrom('sandbox_submissions').select('id').execute();
        assert.equal(rows.length, 52);
      }, { poolSize: 4 });
    });

    it('commits a worker\'s records without a sync of their own, and never another write with them', async () => {
      await withMigratedDatabase(kind, async (database) => {
        const synchronous = async (db: typeof database.db) =>
          Number(Object.values((await sql`pragma synchronous`.execute(db)).rows[0] as object)[0]);
        const submission = (id: string) => ({ id, message_id: 'm', provider_message_id: null, recipient: '+1', outcome: 'x', submitted_at: 0 });
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let inside: number | undefined;
        const relaxed = new GroupCommitter<string, string>(
          database,
          async (trx, ids) => {
            if (kind === 'sqlite') inside = await synchronous(trx);
            await trx.insertInto('sandbox_submissions').values(ids.map(submission)).execute();
            await held;
            return ids;
          },
          { durable: false },
        );
        const worker = relaxed.submit('w1');
        // A write that comes meanwhile (a 202's, say) waits for the connection, and commits synced.
        const other = database.db.transaction().execute(async (trx) => {
          const level = kind === 'sqlite' ? await synchronous(trx) : undefined;
          await trx.insertInto('sandbox_submissions').values(submission('a1')).execute();
          return level;
        });
        await new Promise((resolve) => setTimeout(resolve, 50));
        release();
        assert.equal(await worker, 'w1');
        const otherLevel = await other;
        if (kind === 'sqlite') {
          assert.equal(inside, 1, 'NORMAL inside the worker\'s transaction');
          assert.equal(otherLevel, 2, 'FULL for the other write');
          assert.equal(await synchronous(database.db), 2, 'FULL again after');
          // The file's checkpoints run in a thread of their own, never in this commit (test/db/sqliteCheckpointer.test.ts).
          const autocheckpoint = Object.values((await sql`pragma wal_autocheckpoint`.execute(database.db)).rows[0] as object)[0];
          assert.equal(Number(autocheckpoint), database.checkpointer!.writerBackstopFrames);
        }
        const rows = await database.db.selectFrom('sandbox_submissions').select('id').orderBy('id').execute();
        assert.deepEqual(rows.map((row) => row.id), ['a1', 'w1']);
      }, { poolSize: 4 });
    });
  });
}
