import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { DropBurstWatch } from '../../src/workers/heldMessages.ts';
import { createMessageCounters } from '../../src/workers/messageCounters.ts';

// The operator alert on bursts of 132015 (held messages dropped by Meta's portfolio pacing): per
// sending number, a threshold within a sliding window, at most once per window. The clock is the
// test's own: nothing depends on how fast the machine is.

function watch(settings = { threshold: 3, windowMs: 60_000 }) {
  const lines: any[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  let now = 1_800_000_000_000;
  const counters = createMessageCounters();
  const watcher = new DropBurstWatch(logger, settings, () => now, counters);
  return { watcher, lines, counters, advance: (ms: number) => (now += ms) };
}

async function value(counter: ReturnType<typeof createMessageCounters>['dropBursts']): Promise<number> {
  return (await counter.get()).values.reduce((sum, sample) => sum + sample.value, 0);
}

describe('DropBurstWatch', () => {
  it('alerts once the threshold is reached within the window, with an error-level log naming the number', async () => {
    const { watcher, lines, counters, advance } = watch();
    assert.equal(watcher.record('106540352242922', '132015'), false);
    advance(20_000);
    assert.equal(watcher.record('106540352242922', '132015'), false);
    advance(20_000);
    assert.equal(watcher.record('106540352242922', '132015'), true);
    assert.equal(lines.length, 1);
    assert.equal(lines[0].level, 50, 'error');
    assert.equal(lines[0].phoneNumberId, '106540352242922');
    assert.equal(lines[0].dropped, 3);
    assert.match(lines[0].msg, /132015.*under review/);
    assert.equal(await value(counters.dropBursts), 1, 'this watcher\'s counters only');
    assert.equal(await value(counters.dropped), 3);
  });

  it('does not alert for drops spread wider than the window', () => {
    const { watcher, lines, advance } = watch();
    for (let i = 0; i < 10; i++) {
      assert.equal(watcher.record('1065', '132015'), false);
      advance(30_001); // two drops at most in any minute
    }
    assert.equal(lines.length, 0);
  });

  it('counts each number apart', () => {
    const { watcher, lines } = watch();
    for (const number of ['a', 'b', 'a', 'b']) assert.equal(watcher.record(number, '132015'), false);
    assert.equal(watcher.record('a', '132015'), true);
    assert.equal(lines.length, 1);
    assert.equal(lines[0].phoneNumberId, 'a');
  });

  it('alerts at most once per window per number, and again in a later burst', () => {
    const { watcher, lines, advance } = watch();
    for (let i = 0; i < 3; i++) watcher.record('1065', '132015');
    assert.equal(lines.length, 1);
    for (let i = 0; i < 20; i++) assert.equal(watcher.record('1065', '132015'), false, 'the same burst');
    advance(59_999);
    assert.equal(watcher.record('1065', '132015'), false, 'still within the window of the alert');
    advance(1);
    // The burst's first drops are out of the window: two within it now, then a third.
    assert.equal(watcher.record('1065', '132015'), false);
    assert.equal(watcher.record('1065', '132015'), true, 'a window later, a burst again: alert again');
    assert.equal(lines.length, 2);
  });
});
