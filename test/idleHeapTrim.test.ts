import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import pino from 'pino';
import { startIdleHeapTrim } from '../src/idleHeapTrim.ts';

// Issue #24: V8's heap grown by a burst of requests is given back once svc is idle. Heap-based,
// no timing: the checks are called directly, the utilization and heap figures are injected where
// the decision is tested, and the real GC is measured by V8's own heap statistics.

const silent = pino({ level: 'silent' });
const MiB = 1024 * 1024;

function trimWith(heap: { committed: number; used: number }, utilizations: number[]) {
  let collected = 0;
  const trim = startIdleHeapTrim({
    logger: silent,
    heap: () => heap,
    utilization: () => utilizations.shift() ?? 0,
    collect: () => collected++,
  });
  trim.stop();
  return { trim, collected: () => collected };
}

/** Makes V8 grow its young generation and old generation: garbage that survives a while. */
function churn(): void {
  let kept: unknown[][] = [];
  let batch: unknown[] = [];
  for (let i = 0; i < 2_000_000; i++) {
    batch.push({ i, text: `row ${i}` });
    if (batch.length === 100_000) {
      kept.push(batch);
      if (kept.length > 3) kept.shift();
      batch = [];
    }
  }
  kept = [];
  batch = [];
}

describe('idle heap trim', () => {
  it('trims after two idle checks when V8 holds much more than it uses, and only then', () => {
    const { trim, collected } = trimWith({ committed: 300 * MiB, used: 60 * MiB }, [0.01, 0.01, 0.01]);
    assert.equal(trim.check(), false, 'one idle check is not enough');
    assert.equal(trim.check(), true);
    assert.equal(collected(), 1);
    assert.equal(trim.check(), false, 'the count starts again after a trim');
  });

  it('does not trim while the event loop is busy (a load, the workers sending)', () => {
    const { trim, collected } = trimWith({ committed: 300 * MiB, used: 60 * MiB }, [0.01, 0.5, 0.01, 0.2, 0.9, 0.01]);
    for (let i = 0; i < 6; i++) assert.equal(trim.check(), false);
    assert.equal(collected(), 0);
  });

  it('does not trim a heap without slack to give back', () => {
    const { trim, collected } = trimWith({ committed: 100 * MiB, used: 80 * MiB }, []);
    for (let i = 0; i < 5; i++) trim.check();
    assert.equal(collected(), 0);
  });

  it('gives back the memory V8 grew to under a burst (its real GC)', () => {
    churn();
    const before = v8.getHeapStatistics().total_heap_size;
    let trimmed = false;
    const trim = startIdleHeapTrim({
      logger: silent,
      utilization: () => 0,
      // Whatever the slack V8 left here, trim: what is measured is what the GC gives back.
      heap: () => (trimmed ? { committed: v8.getHeapStatistics().total_heap_size, used: 0 } : { committed: Number.MAX_SAFE_INTEGER, used: 0 }),
    });
    trim.stop();
    trim.check();
    trimmed = trim.check();
    assert.ok(trimmed);
    const after = v8.getHeapStatistics().total_heap_size;
    assert.ok(before - after > 32 * MiB, `committed heap ${Math.round(before / MiB)} → ${Math.round(after / MiB)} MiB`);
  });
});
