import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_WEBHOOK_LIMITS, perProjectLimit } from '../../src/workers/webhookSlots.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { emitStatus, insertMessage, liveSecrets, setCallbackUrl } from '../support/webhookEvents.ts';
import { hang, ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// A receiver that never answers holds its attempts for the whole timeout. It must not hold up
// another project's webhooks: attempts run concurrently, bounded per project and receiver
// origin, and a project's deliveries beyond its share wait unclaimed. The latencies are reported,
// not asserted.

// Long enough that no hanging attempt ends while the test runs, however slow the machine: the
// fast receiver's webhooks arriving at all then proves they did not wait for a hanging one.
const TIMEOUT_MS = 120_000;
const SLOW_EVENTS = 60;
const FAST_EVENTS = 40;

function summary(latencies: number[]): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
  return `n=${sorted.length} p50=${at(0.5)} ms p95=${at(0.95)} ms max=${sorted.at(-1)!.toFixed(1)} ms`;
}

for (const kind of databaseKinds()) {
  describe(`webhook isolation (${kind})`, () => {
    let server: TestServer;
    let slow: WebhookReceiver;
    let fast: WebhookReceiver;

    before(async () => {
      server = await startTestServer(kind, { env: { SVC_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
      slow = await startWebhookReceiver(hang);
      fast = await startWebhookReceiver(ok);
    });
    after(async () => {
      await server.close();
      await slow.close();
      await fast.close();
    });

    async function fastLatencies(label: string, interleaveSlow: (() => Promise<unknown>) | undefined) {
      const { projectId } = await server.createProject(label);
      await setCallbackUrl(server.app, projectId, fast.url);
      fast.secrets = await liveSecrets(server.app, projectId);
      const enqueuedAt = new Map<string, number>();
      for (let i = 0; i < FAST_EVENTS; i++) {
        const message = await insertMessage(server.app, projectId);
        enqueuedAt.set(message.id, performance.now());
        await emitStatus(server.app, message, 'SENT');
        await interleaveSlow?.();
        // Events arrive over time, as status changes do; a tight loop would only measure how
        // long it keeps the (single) SQLite connection to itself.
        await sleep(5);
      }
      // Well before any hanging attempt could time out.
      await fast.waitFor(
        (arrivals) => [...enqueuedAt.keys()].every((id) => arrivals.some((arrival) => arrival.body.includes(id))),
        TIMEOUT_MS / 2,
      );
      return [...enqueuedAt].map(([id, start]) => {
        const arrival = fast.arrivals.find((candidate) => candidate.body.includes(id))!;
        assert.deepEqual(arrival.verified, [true]);
        return arrival.at - start;
      });
    }

    it('delivers a fast receiver’s webhooks without waiting for a hanging one', async (t) => {
      const baseline = await fastLatencies('fast alone', undefined);

      const hanging = await server.createProject('hanging');
      await setCallbackUrl(server.app, hanging.projectId, slow.url);
      const emitSlow = async () => {
        await emitStatus(server.app, await insertMessage(server.app, hanging.projectId), 'SENT');
      };
      for (let i = 0; i < SLOW_EVENTS; i++) await emitSlow();
      const share = perProjectLimit(DEFAULT_WEBHOOK_LIMITS);
      await slow.waitFor((arrivals) => arrivals.length >= share);

      const contended = await fastLatencies('fast beside a hanging receiver', emitSlow);

      // The high-water mark of requests held open at once, not the count of arrivals: on a loaded
      // machine a hanging attempt may time out and free its slot for the next one, which is
      // what the cap allows.
      assert.equal(
        slow.mostHanging,
        share,
        'the hanging project holds no more than its share of its origin’s attempts',
      );
      t.diagnostic(`fast receiver alone:               ${summary(baseline)}`);
      t.diagnostic(`fast receiver beside a hanging one: ${summary(contended)}`);
      t.diagnostic(`hanging receiver: at most ${slow.mostHanging} attempts open at once (${slow.arrivals.length} in all), ${SLOW_EVENTS * 2} deliveries queued`);
    });
  });
}
