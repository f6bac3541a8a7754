import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { MemorySendRateGate, SharedSendRateGate, WINDOW_MS, windowBudget } from '../../src/workers/sendRate.ts';
import { createTestDatabase } from '../support/databases.ts';

describe('send pacing', () => {
  it('spreads each second’s budget over its windows, summing to exactly the cap', () => {
    for (const max of [1, 5, 7, 80, 85, 400, 1000]) {
      let sum = 0;
      for (let start = 0; start < 1000; start += WINDOW_MS) sum += windowBudget(max, 5000 + start);
      assert.equal(sum, max, `cap ${max}`);
    }
    assert.equal(windowBudget(80, 0), 10);
    assert.equal(windowBudget(80, 800), 0, 'the last two windows of a second are left empty');
    assert.equal(windowBudget(80, 900), 0, 'the last two windows of a second are left empty');
  });

  it('grants no more than a window’s budget per number; numbers and caps are independent', async () => {
    const gate = new MemorySendRateGate();
    const now = 10_000;
    assert.equal(await gate.reserve('a', 100, 80, now), 10);
    assert.equal(await gate.reserve('a', 5, 80, now + 50), 0);
    assert.equal(await gate.reserve('b', 5, 80, now + 50), 5);
    assert.equal(await gate.reserve('c', 500, 1000, now + 50), 125);
    assert.equal(await gate.reserve('a', 100, 80, now + WINDOW_MS), windowBudget(80, now + WINDOW_MS));
  });
});

describe('send pacing shared across processes (postgres)', { skip: !process.env.SVC_TEST_POSTGRES_URL }, () => {
  it('two processes’ concurrent reservations never pass a window’s budget, per number', async () => {
    const testDb = await createTestDatabase('postgres');
    const one = openDatabase(testDb.url, { poolSize: 4 });
    const two = openDatabase(testDb.url, { poolSize: 4 });
    try {
      await migrateToLatest(one.db);
      const gates = [new SharedSendRateGate(one), new SharedSendRateGate(two)];
      const windowStart = Math.floor(Date.now() / 1000) * 1000 + 60_000; // a window nobody else uses
      const asks: Promise<number>[] = [];
      for (let i = 0; i < 40; i++) {
        asks.push(gates[i % 2]!.reserve('n80', 3, 80, windowStart + 10));
        asks.push(gates[i % 2]!.reserve('n20', 1, 20, windowStart + 10));
      }
      const granted = await Promise.all(asks);
      const n80 = granted.filter((_, i) => i % 2 === 0).reduce((a, b) => a + b, 0);
      const n20 = granted.filter((_, i) => i % 2 === 1).reduce((a, b) => a + b, 0);
      assert.equal(n80, windowBudget(80, windowStart), 'the 80/s number got exactly its window budget');
      assert.equal(n20, windowBudget(20, windowStart), 'the 20/s number got exactly its window budget');
      assert.equal(await gates[0]!.reserve('n80', 5, 80, windowStart + WINDOW_MS), 5, 'the next window is fresh');

      // Two processes asking for the same numbers in opposite orders lock them in one order: no deadlock.
      const numbers = Array.from({ length: 20 }, (_, i) => `m${i}`);
      for (let round = 0; round < 5; round++) {
        const at = windowStart + (round + 2) * WINDOW_MS;
        await Promise.all([
          ...numbers.map((number) => gates[0]!.reserve(number, 1, 80, at)),
          ...numbers.toReversed().map((number) => gates[1]!.reserve(number, 1, 80, at)),
        ]);
      }
    } finally {
      await one.close();
      await two.close();
      await testDb.drop();
    }
  });
});
