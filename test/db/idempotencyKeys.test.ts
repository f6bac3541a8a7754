import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  claimIdempotencyKeys,
  findIdempotencyRecord,
  purgeExpiredIdempotencyKeys,
} from '../../src/db/idempotencyKeys.ts';
import { insertProject } from '../../src/db/projects.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';

for (const kind of databaseKinds()) {
  describe(`idempotency records (${kind})`, () => {
    it('expire after their window: ignored, replaceable, then purged', async () => {
      await withMigratedDatabase(kind, async (database) => {
        await insertProject(database.db, testProjectRow('proj_1'));
        const record = (key: string, hash: string, createdAt: number) => ({
          project_id: 'proj_1',
          key,
          request_hash: hash,
          message_id: `msg_${hash}`,
          response_status: 202,
          response_body: '{}',
          created_at: createdAt,
          expires_at: createdAt + 86_400_000,
        });
        const day0 = 1_000_000_000_000;
        assert.deepEqual([...(await claimIdempotencyKeys(database.db, [record('old', 'a', day0), record('live', 'b', day0 + 3_600_000)], day0 + 3_600_000))].length, 2);

        const later = day0 + 86_400_000 + 1; // 'old' has expired, 'live' has not
        assert.equal(await findIdempotencyRecord(database.db, 'proj_1', 'old', later), undefined);
        assert.equal((await findIdempotencyRecord(database.db, 'proj_1', 'live', later))?.request_hash, 'b');

        // An expired key can be used again; a live one cannot be taken over.
        const claimed = await claimIdempotencyKeys(database.db, [record('old', 'c', later), record('live', 'd', later)], later);
        assert.deepEqual([...claimed], ['proj_1\nold']);
        assert.equal((await findIdempotencyRecord(database.db, 'proj_1', 'old', later))?.request_hash, 'c');
        assert.equal((await findIdempotencyRecord(database.db, 'proj_1', 'live', later))?.request_hash, 'b');

        assert.equal(await purgeExpiredIdempotencyKeys(database.db, day0 + 2 * 86_400_000), 1);
        const left = await database.db.selectFrom('idempotency_keys').select('key').execute();
        assert.deepEqual(
          left.map((row) => row.key),
          ['old'],
        );
      });
    });
  });
}
