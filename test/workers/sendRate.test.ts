import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemorySendRateGate, WINDOW_MS, windowBudget } from '../../src/workers/sendRate.ts';

describe('send pacing', () => {
  it('spreads each second’s budget over its windows, summing to exactly the cap', () => {
    for (const max of [1, 5, 7, 80, 85, 400, 1000]) {
      let sum = 0;
      for (let start = 0; start < 1000; start += WINDOW_MS) sum += windowBudget(max, 5000 + start);
      assert.equal(sum, max, `cap ${max}`);
    }
    assert.equal(windowBudget(80, 0), 8);
  });

  it('grants no more than a window’s budget per number, and numbers are independent', async () => {
    const gate = new MemorySendRateGate(80);
    const now = 10_000;
    assert.deepEqual(await gate.reserve('a', 100, now), { granted: 8, windowEnd: now + WINDOW_MS });
    assert.equal((await gate.reserve('a', 5, now + 50)).granted, 0);
    assert.equal((await gate.reserve('b', 5, now + 50)).granted, 5);
    assert.equal((await gate.reserve('a', 100, now + WINDOW_MS)).granted, 8);
  });
});
