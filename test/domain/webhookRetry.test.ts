import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_RETRY_AFTER_MS, nextRetryDelay, parseRetryAfter } from '../../src/domain/webhookRetry.ts';

const SCHEDULE = [5000, 300_000, 1_800_000];

describe('webhook retry schedule', () => {
  it('waits each step of the schedule in turn, then gives up', () => {
    const exact = () => 0.5;
    assert.equal(nextRetryDelay(SCHEDULE, 1, undefined, exact), 5000);
    assert.equal(nextRetryDelay(SCHEDULE, 2, undefined, exact), 300_000);
    assert.equal(nextRetryDelay(SCHEDULE, 3, undefined, exact), 1_800_000);
    assert.equal(nextRetryDelay(SCHEDULE, 4, undefined, exact), undefined);
  });

  it('moves each wait by at most ±10 %', () => {
    assert.equal(nextRetryDelay(SCHEDULE, 1, undefined, () => 0), 4500);
    assert.equal(nextRetryDelay(SCHEDULE, 1, undefined, () => 0.999999), 5500);
    for (let i = 0; i < 1000; i++) {
      const delay = nextRetryDelay(SCHEDULE, 2)!;
      assert.ok(delay >= 270_000 && delay <= 330_000, String(delay));
    }
  });

  it('honours a longer Retry-After up to a day, never a shorter one, never beyond the schedule', () => {
    const exact = () => 0.5;
    assert.equal(nextRetryDelay(SCHEDULE, 1, 60_000, exact), 60_000);
    assert.equal(nextRetryDelay(SCHEDULE, 1, 1000, exact), 5000);
    assert.equal(nextRetryDelay(SCHEDULE, 1, 10 * MAX_RETRY_AFTER_MS, exact), MAX_RETRY_AFTER_MS);
    assert.equal(nextRetryDelay(SCHEDULE, 4, 60_000, exact), undefined);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-22T10:00:00.000Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 10:05:00 GMT', now), 300_000);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now), 0);
    for (const junk of [undefined, '', '-5', '1.5', 'soon', '12 May']) assert.equal(parseRetryAfter(junk, now), undefined, String(junk));
  });
});
