import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { GroupCommitter } from '../../src/db/groupCommit.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';

for (const kind of databaseKinds()) {
  describe(`group commit (${kind})`, () => {
    it('commits concurrent writes together, and a bad one fails alone', async () => {
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 4 });
      try {
        await migrateToLatest(database.db, database.dialect);
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
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}
