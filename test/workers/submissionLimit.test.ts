import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SubmissionLimit } from '../../src/workers/submissionLimit.ts';

// The in-flight limit against recorded waits at given times (no clock: `now` is passed in).

describe('submission limit', () => {
  const options = { max: 2000, min: 200, targetWaitMs: 100, intervalMs: 250 };

  it('starts at its ceiling and stays there while outcomes are recorded within the target', () => {
    const limit = new SubmissionLimit(options);
    for (let now = 0; now <= 5000; now += 10) limit.recorded(20, now);
    assert.equal(limit.value, 2000);
  });

  it('shrinks while outcomes wait longer than the target, not below its floor, and grows back when they do not', () => {
    const limit = new SubmissionLimit(options);
    const seen: number[] = [];
    for (let now = 0; now <= 1000; now += 10) {
      limit.recorded(400, now);
      seen.push(limit.value);
    }
    assert.ok(seen.at(-1)! < 2000, 'shrunk');
    assert.deepEqual(
      [...new Set(seen)],
      [2000, 1500, 1125, 843, 632],
      'by a quarter per interval of 250 ms',
    );
    for (let now = 1000; now <= 10_000; now += 10) limit.recorded(400, now);
    assert.equal(limit.value, 200, 'never below the floor');
    for (let now = 10_000; now <= 30_000; now += 10) limit.recorded(50, now);
    assert.equal(limit.value, 2000, 'back to the ceiling');
  });

  it('judges an interval by its mean wait', () => {
    const limit = new SubmissionLimit(options);
    // 9 quick ones and one slow one: a mean of 59 ms, under the target.
    for (let i = 0; i < 30; i++) limit.recorded(i % 10 === 9 ? 500 : 10, i * 10);
    assert.equal(limit.value, 2000);
  });

  it('a floor above the ceiling is the ceiling', () => {
    const limit = new SubmissionLimit({ ...options, max: 3 });
    for (let now = 0; now <= 5000; now += 10) limit.recorded(1000, now);
    assert.equal(limit.value, 3);
  });
});
