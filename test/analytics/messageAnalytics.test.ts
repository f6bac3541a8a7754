import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { messageAnalytics } from '../../src/analytics/messageAnalytics.ts';
import { DomainError } from '../../src/errors.ts';
import { databaseKinds, withMigratedDatabase } from '../support/databases.ts';

// The message-analytics use case without HTTP: its range rules and its zero-filled buckets.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

for (const kind of databaseKinds()) {
  describe(`message analytics as a use case (${kind})`, () => {
    it('rounds the range to whole buckets, zero-fills them, and refuses a range backwards or too long', async () => {
      await withMigratedDatabase(kind, async (database) => {
        const from = Date.UTC(2026, 0, 1, 5, 30);
        const answer = await messageAnalytics(database.reader, 'proj_none', { from, to: from + 2 * DAY, interval: 'day', groupBy: 'status' });
        assert.equal(answer.start, Date.UTC(2026, 0, 1));
        assert.equal(answer.end, Date.UTC(2026, 0, 4));
        assert.equal(answer.buckets.length, 3);
        assert.deepEqual(answer.buckets[0]!.counts, { QUEUED: 0, SENT: 0, DELIVERED: 0, READ: 0, FAILED: 0, CANCELED: 0 });
        for (const query of [
          { from, to: from, interval: 'hour' as const },
          { from, to: from + 32 * DAY, interval: 'hour' as const },
        ]) {
          await assert.rejects(messageAnalytics(database.reader, 'proj_none', { ...query, groupBy: 'status' }), (error: unknown) => {
            assert.ok(error instanceof DomainError);
            assert.equal(error.code, 'invalid_time_range');
            assert.equal(error.errors![0]!.field, 'query:/to');
            return true;
          });
        }
      });
    });
  });
}
