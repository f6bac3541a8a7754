import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Verdict, verdictOf, WebhookCircuits } from '../../src/workers/webhookCircuits.ts';

// The circuit breaker of one receiver origin, step by step (times are given, not waited for).

const ORIGIN = 'https://hooks.example';
const OPTIONS = { threshold: 5, baseCooldownMs: 5000, maxCooldownMs: 30_000 };

function failTimes(circuits: WebhookCircuits, n: number, now: number, verdict: Verdict = 'failing') {
  const transitions = [];
  for (let i = 0; i < n; i++) {
    transitions.push(circuits.record(ORIGIN, verdict, { probe: false, now, error: 'HTTP 503: not a 2xx answer' }));
  }
  return transitions.filter((transition) => transition !== undefined);
}

describe('webhook circuits', () => {
  it('judges attempts: down, overloaded or throttling counts; a prompt answer or no attempt does not', () => {
    const judged = (result: Parameters<typeof verdictOf>[0]) => verdictOf(result);
    assert.equal(judged({ outcome: 'acknowledged', statusCode: 200, durationMs: 1 }), 'healthy');
    for (const statusCode of [500, 502, 503, 408, 429]) {
      assert.equal(judged({ outcome: 'http_error', statusCode, durationMs: 1 }), 'failing', String(statusCode));
    }
    for (const statusCode of [400, 401, 404, 410]) {
      assert.equal(judged({ outcome: 'http_error', statusCode, durationMs: 1 }), 'healthy', String(statusCode));
    }
    assert.equal(judged({ outcome: 'redirect', statusCode: 302, durationMs: 1 }), 'healthy');
    assert.equal(judged({ outcome: 'timeout', durationMs: 10_000 }), 'failing');
    assert.equal(judged({ outcome: 'network_error', durationMs: 3 }), 'failing');
    assert.equal(judged({ outcome: 'refused', durationMs: 0 }), 'neutral');
    assert.equal(judged({ outcome: 'interrupted', durationMs: 5 }), 'neutral');
  });

  it('opens after the threshold of consecutive failures, and a healthy answer resets the count', () => {
    const circuits = new WebhookCircuits(OPTIONS);
    assert.deepEqual(failTimes(circuits, 4, 1000), []);
    circuits.record(ORIGIN, 'healthy', { probe: false, now: 1000 });
    assert.deepEqual(failTimes(circuits, 4, 1000), [], 'the count started again');
    const [opened] = failTimes(circuits, 1, 1000);
    assert.equal(opened?.to, 'open');
    assert.deepEqual(opened?.to === 'open' && opened.row, {
      origin: ORIGIN,
      opened_at: 1000,
      retry_at: 6000,
      cooldown_ms: 5000,
      failures: 5,
      last_error: 'HTTP 503: not a 2xx answer',
      updated_at: 1000,
    });
    assert.equal(circuits.openCount, 1);
    assert.equal(circuits.allowance(ORIGIN, 5999), 0);
    assert.equal(circuits.heldUntil(ORIGIN, 2000), 6000);
    assert.equal(circuits.nextProbeAt(2000), 6000);
    assert.equal(circuits.allowance('https://other.example', 2000), Infinity, 'other origins are untouched');
  });

  it('lets one probe through after the cool-down; a failed probe opens it for twice as long, capped', () => {
    const circuits = new WebhookCircuits(OPTIONS);
    failTimes(circuits, 5, 0);
    let now = 5000;
    for (const cooldown of [10_000, 20_000, 30_000, 30_000]) {
      assert.equal(circuits.allowance(ORIGIN, now), 1);
      circuits.beginProbe(ORIGIN);
      assert.equal(circuits.allowance(ORIGIN, now), 0, 'one probe at a time');
      // Attempts that were in flight when it opened only add to the count.
      assert.equal(circuits.record(ORIGIN, 'failing', { probe: false, now }), undefined);
      const reopened = circuits.record(ORIGIN, 'failing', { probe: true, now, error: 'timeout' });
      assert.equal(reopened?.to === 'open' && reopened.reopened, true);
      assert.equal(reopened?.to === 'open' && reopened.row.retry_at, now + cooldown);
      now += cooldown;
    }
  });

  it('closes on a healthy probe; an interrupted probe lets another one through', () => {
    const circuits = new WebhookCircuits(OPTIONS);
    failTimes(circuits, 5, 0);
    circuits.beginProbe(ORIGIN);
    assert.equal(circuits.record(ORIGIN, 'neutral', { probe: true, now: 5000 }), undefined);
    assert.equal(circuits.allowance(ORIGIN, 5000), 1);
    circuits.beginProbe(ORIGIN);
    assert.deepEqual(circuits.record(ORIGIN, 'healthy', { probe: true, now: 5100 }), {
      to: 'closed',
      origin: ORIGIN,
      openedAt: 0,
    });
    assert.equal(circuits.allowance(ORIGIN, 5100), Infinity);
    assert.equal(circuits.openCount, 0);
  });

  it('adopts a circuit another process opened, but not one it has closed since', () => {
    const row = {
      origin: ORIGIN,
      opened_at: 0,
      retry_at: 5000,
      cooldown_ms: 5000,
      failures: 5,
      last_error: null,
      updated_at: 100,
    };
    const fresh = new WebhookCircuits(OPTIONS);
    assert.deepEqual(fresh.adopt([row], 200), [ORIGIN]);
    assert.equal(fresh.allowance(ORIGIN, 200), 0);
    assert.equal(fresh.allowance(ORIGIN, 5000), 1);

    const recovered = new WebhookCircuits(OPTIONS);
    failTimes(recovered, 5, 0);
    recovered.record(ORIGIN, 'healthy', { probe: true, now: 150 });
    assert.deepEqual(recovered.adopt([row], 200), [], 'the row is older than its own close');
    assert.equal(recovered.allowance(ORIGIN, 200), Infinity);
  });
});
