import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import {
  deliveryRows,
  emitStatus,
  enqueueBacklog,
  insertMessage,
  liveSecrets,
  setCallbackUrl,
  type TestMessage,
  waitUntil,
} from '../support/webhookEvents.ts';
import { type Arrival, ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// A receiver that keeps failing stops taking slots: after a few failed attempts in a row its
// circuit opens, its deliveries wait (not attempted, their schedule untouched) and one attempt
// at a time probes it after a cool-down; a healthy answer closes the circuit. Meanwhile other
// projects' webhooks keep arriving. The circuit shows in the metrics, the log and the delivery.

const THRESHOLD = 5;
const BACKLOG = 60;

function metric(text: string, name: string): number {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

/** Arrivals never overlap: each starts after the one before was answered. */
function oneAtATime(arrivals: Arrival[]): boolean {
  return arrivals.every((arrival, i) => i === 0 || arrival.at >= arrivals[i - 1]!.answeredAt!);
}

for (const kind of databaseKinds()) {
  describe(`webhook circuit breaking (${kind})`, () => {
    let server: TestServer;
    let failing: WebhookReceiver;
    let fast: WebhookReceiver;
    const logLines: Record<string, unknown>[] = [];

    before(async () => {
      const sink = new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split('\n')) if (line) logLines.push(JSON.parse(line));
          done();
        },
      });
      server = await startTestServer(kind, {
        // The first wait of the schedule is the circuit's first cool-down.
        env: { SVC_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s', SVC_WEBHOOK_TIMEOUT_MS: '2000' },
        logger: pino({ level: 'info' }, sink),
      });
      failing = await startWebhookReceiver(() => ({ status: 503, delayMs: 50, body: 'down for maintenance' }));
      fast = await startWebhookReceiver(ok);
    });
    after(async () => {
      await server.close();
      await failing.close();
      await fast.close();
    });

    async function metrics(): Promise<string> {
      const reply = await server.call('GET', '/metrics');
      assert.equal(reply.status, 200);
      return reply.text;
    }

    it('holds a failing receiver’s deliveries, probes it one attempt at a time, and closes on success', async () => {
      const down = await server.createProject('down');
      await setCallbackUrl(server.app, down.projectId, failing.url);
      await enqueueBacklog(server.app, down.projectId, BACKLOG);

      await waitUntil(async () => metric(await metrics(), 'svc_webhook_circuit_open') === 1, 15_000, 'circuit open');
      // Attempts that were in flight when it opened are answered; nothing else was started.
      await failing.waitFor((arrivals) => arrivals.every((arrival) => arrival.answeredAt !== undefined));
      const wave = failing.arrivals.length;
      assert.ok(wave >= THRESHOLD, `opened after ${wave} failed attempts`);
      assert.ok(wave < BACKLOG / 2, 'the backlog was not sent into the failing receiver');

      // Another project's webhooks arrive meanwhile.
      const up = await server.createProject('up');
      await setCallbackUrl(server.app, up.projectId, fast.url);
      fast.secrets = await liveSecrets(server.app, up.projectId);
      const messages: TestMessage[] = [];
      for (let i = 0; i < 10; i++) {
        const message = await insertMessage(server.app, up.projectId);
        messages.push(message);
        await emitStatus(server.app, message, 'SENT');
      }
      await fast.waitFor((arrivals) => messages.every((message) => arrivals.some((a) => a.body.includes(message.id))));

      // The delivery log says why the others wait, and until when; they are not attempts.
      const rows = await deliveryRows(server.app, down.projectId);
      const waiting = rows.filter((row) => row.attempt_count === 0);
      assert.ok(waiting.length >= BACKLOG - wave - 2, 'held deliveries were not attempted');
      assert.ok(waiting.every((row) => row.status === 'pending'), 'held deliveries are never dropped');
      const shown = await server.call('GET', `/v1/webhook-deliveries/${waiting.at(-1)!.id}`, { key: down.key });
      assert.equal(shown.status, 200);
      const { circuit, nextAttemptAt, attempts } = shown.body;
      assert.deepEqual(attempts, []);
      assert.equal(circuit.state, 'open');
      assert.equal(circuit.origin, new URL(failing.url).origin);
      assert.ok(circuit.consecutiveFailures >= THRESHOLD);
      assert.match(circuit.lastError, /HTTP 503/);
      assert.ok(Date.parse(nextAttemptAt) >= Date.parse(circuit.retryAt), 'nextAttemptAt waits for the circuit');
      const listed = await server.call('GET', '/v1/webhook-deliveries?status=pending&limit=200', { key: down.key });
      assert.ok(listed.body.every((delivery: any) => delivery.circuit?.origin === circuit.origin));

      // Held deliveries are counted while the circuit holds them back: from its opening to the
      // first probe (a 1 s cool-down a loaded machine may have spent already), and again through
      // each longer cool-down after a failed probe. Polled, so the machine's speed decides nothing;
      // the bound is not a measure.
      await waitUntil(async () => metric(await metrics(), 'svc_webhook_deliveries_held') > 0, 60_000, 'held deliveries are counted');
      const text = await metrics();
      assert.match(text, /svc_webhook_circuit_transitions_total\{to="open"\} 1/);
      const opened = logLines.find((line) => String(line.msg).includes('circuit open'));
      assert.equal(opened?.origin, circuit.origin);
      assert.equal(opened?.level, 40, 'logged as a warning');

      // After the cool-down, probes: one attempt at a time; a failed probe keeps it open.
      await failing.waitFor((arrivals) => arrivals.length >= wave + 2, 15_000);
      assert.ok(oneAtATime(failing.arrivals.slice(wave)), 'one probe at a time');
      assert.match(await metrics(), /svc_webhook_circuit_transitions_total\{to="reopened"\} [1-9]/);

      // A healthy answer closes it, and the held deliveries go out.
      failing.respond = ok;
      await waitUntil(
        async () => (await deliveryRows(server.app, down.projectId)).every((row) => row.status === 'succeeded'),
        30_000,
        'every held delivery delivered',
      );
      const after = await metrics();
      assert.equal(metric(after, 'svc_webhook_circuit_open'), 0);
      assert.match(after, /svc_webhook_circuit_transitions_total\{to="closed"\} 1/);
      const closed = await server.call('GET', `/v1/webhook-deliveries/${waiting.at(-1)!.id}`, { key: down.key });
      assert.equal(closed.body.status, 'succeeded');
      assert.ok(!('circuit' in closed.body));
      assert.ok(logLines.some((line) => String(line.msg).includes('circuit closed') && line.origin === circuit.origin));
      // Holding back cost no attempt: each delivery was attempted as often as it failed, plus one.
      for (const row of await deliveryRows(server.app, down.projectId)) {
        const arrivals = failing.arrivalsFor(row.id);
        assert.equal(row.attempt_count, arrivals.length);
        assert.deepEqual(
          arrivals.map((arrival) => arrival.attempt),
          arrivals.map((_, i) => i + 1),
        );
      }
    });
  });
}
