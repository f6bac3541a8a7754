import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../../src/domain/secretBox.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import {
  deliveryAttempts,
  deliveryBody,
  deliveryRows,
  emitStatus,
  type EventStatus,
  insertMessage,
  liveSecrets,
  rotateSecretInDatabase,
  setCallbackUrl,
  waitUntil,
} from '../support/webhookEvents.ts';
import {
  type Arrival,
  failTimes,
  hang,
  ok,
  redirectTo,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/webhookReceiver.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RETRIES = 3;
const TIMEOUT_MS = 300;

const FAILURE = { code: '131026', title: 'Message undeliverable', message: 'Unable to deliver message.' };

for (const kind of databaseKinds()) {
  describe(`webhook delivery (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;

    before(async () => {
      // The default timeout (10 s): a receiver that answers is never timed out, however loaded
      // the machine. Only the tests about hanging receivers use a short one (below).
      server = await startTestServer(kind, { env: { SVC_WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms' } });
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    /** A project whose callbackUrl is the receiver (or `url`), and the receiver set to trust its secret. */
    async function project(url: string = receiver.url) {
      const created = await server.createProject();
      await setCallbackUrl(server.app, created.projectId, url);
      receiver.secrets = await liveSecrets(server.app, created.projectId);
      return created;
    }

    async function deliveryOf(projectId: string, eventId: string) {
      const rows = await deliveryRows(server.app, projectId);
      return rows.find((row) => row.event_id === eventId)!;
    }

    async function settled(projectId: string, eventId: string) {
      await waitUntil(async () => (await deliveryOf(projectId, eventId))?.status !== 'pending', 15_000, 'delivery settled');
      return deliveryOf(projectId, eventId);
    }

    describe('happy path', () => {
      it('sends all four events, signed, with every header and payload field', async () => {
        receiver.respond = ok;
        const { projectId } = await project();
        const first = await insertMessage(server.app, projectId);
        const failed = await insertMessage(server.app, projectId);
        const occurredAt = Date.parse('2026-11-22T10:00:00.123Z');
        const emitted = [
          await emitStatus(server.app, first, 'SENT', { occurredAt }),
          await emitStatus(server.app, first, 'DELIVERED', { occurredAt: occurredAt + 1000 }),
          await emitStatus(server.app, first, 'READ', { occurredAt: occurredAt + 2000 }),
          await emitStatus(server.app, failed, 'FAILED', { occurredAt: occurredAt + 3000, error: FAILURE }),
        ];
        for (const { enqueued } of emitted) assert.equal(enqueued, true);

        for (const { event, eventId } of emitted) {
          const delivery = await settled(projectId, eventId);
          assert.equal(delivery.status, 'succeeded');
          const arrivals = receiver.arrivalsFor(delivery.id);
          assert.equal(arrivals.length, 1);
          const arrival = arrivals[0]!;
          const name = `message.${event.status.toLowerCase()}`;

          assert.equal(arrival.method, 'POST');
          assert.equal(arrival.path, '/hooks');
          assert.equal(arrival.headers['content-type'], 'application/json');
          assert.equal(arrival.headers['user-agent'], 'Service/1.0');
          assert.equal(arrival.headers['x-service-event'], name);
          assert.match(String(arrival.headers['x-service-delivery']), UUID);
          assert.equal(arrival.headers['x-service-delivery'], delivery.id);
          assert.equal(arrival.headers['x-service-delivery-attempt'], '1');
          assert.equal(arrival.headers['webhook-id'], delivery.id);
          const timestamp = Number(arrival.headers['webhook-timestamp']);
          assert.ok(Number.isInteger(timestamp));
          assert.ok(Math.abs(timestamp - Date.now() / 1000) < 60, 'webhook-timestamp is the time of the attempt');
          assert.match(String(arrival.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
          assert.deepEqual(arrival.verified, [true], 'standardwebhooks verifies the signature');

          const payload = JSON.parse(arrival.body);
          const expectedKeys = ['event', 'message_id', 'to', 'template', 'status', 'provider_message_id', 'occurred_at'];
          if (event.status === 'FAILED') expectedKeys.push('error');
          assert.deepEqual(Object.keys(payload), expectedKeys);
          assert.equal(payload.event, name);
          assert.equal(payload.event, arrival.headers['x-service-event']);
          assert.equal(payload.message_id, event.messageId);
          assert.equal(payload.to, event.to);
          assert.match(payload.to, /^\+[1-9]\d{7,14}$/);
          assert.equal(payload.template, 'order_update');
          assert.equal(payload.status, event.status);
          assert.equal(payload.provider_message_id, event.providerMessageId);
          assert.equal(payload.occurred_at, new Date(event.occurredAt).toISOString());
          assert.match(payload.occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
          if (event.status === 'FAILED') assert.deepEqual(payload.error, FAILURE);
          // The body (rebuilt from the event, not stored) is the exact bytes that were signed and sent.
          assert.equal(delivery.payload, '');
          assert.equal(arrival.body, await deliveryBody(server.app, delivery));
        }
      });

      it('first attempts one message’s events in the order they happened', async () => {
        // Each answer takes a while: a later event sent while an earlier one's first attempt is
        // still open would arrive before that answer.
        receiver.respond = () => ({ status: 200, delayMs: 100 });
        const { projectId } = await project();
        const message = await insertMessage(server.app, projectId);
        const statuses: EventStatus[] = ['SENT', 'DELIVERED', 'READ'];
        const events = [];
        for (const status of statuses) events.push(await emitStatus(server.app, message, status, { wake: false }));
        server.app.notifier.wakeLocal('webhooks');
        for (const { eventId } of events) await settled(projectId, eventId);
        const arrivals = receiver.arrivals.filter((arrival) => arrival.body.includes(message.id));
        assert.deepEqual(
          arrivals.map((arrival) => JSON.parse(arrival.body).status),
          statuses,
        );
        for (let i = 1; i < arrivals.length; i++) {
          assert.ok(
            arrivals[i]!.at > arrivals[i - 1]!.answeredAt!,
            `${statuses[i]} was sent only after ${statuses[i - 1]}'s first attempt was answered`,
          );
        }
      });

      it('sends nothing for a project without a callbackUrl', async () => {
        const { projectId } = await server.createProject();
        const message = await insertMessage(server.app, projectId);
        const { enqueued } = await emitStatus(server.app, message, 'SENT');
        assert.equal(enqueued, false);
        assert.deepEqual(await deliveryRows(server.app, projectId), []);
      });

      it('signs with both secrets during a rotation', async () => {
        receiver.respond = ok;
        const { projectId } = await project();
        const [oldSecret] = await liveSecrets(server.app, projectId);
        const newSecret = generateWebhookSecret();
        await rotateSecretInDatabase(server.app, projectId, newSecret);
        assert.deepEqual(await liveSecrets(server.app, projectId), [newSecret, oldSecret]);
        receiver.secrets = [newSecret, oldSecret!];
        const message = await insertMessage(server.app, projectId);
        const { eventId } = await emitStatus(server.app, message, 'SENT');
        const delivery = await settled(projectId, eventId);
        const [arrival] = receiver.arrivalsFor(delivery.id);
        const signatures = String(arrival!.headers['webhook-signature']).split(' ');
        assert.equal(signatures.length, 2);
        assert.deepEqual(arrival!.verified, [true, true], 'each secret alone verifies the request');
        // Each signature belongs to one secret, the new one first.
        const headers = arrival!.headers as Record<string, string>;
        for (const [index, secret] of [newSecret, oldSecret!].entries()) {
          const single = { ...headers, 'webhook-signature': signatures[index]! };
          assert.doesNotThrow(() => new Webhook(secret).verify(arrival!.body, single));
        }
        assert.throws(() => new Webhook(generateWebhookSecret()).verify(arrival!.body, headers));
      });
    });

    describe('retries', () => {
      it('retries a failing receiver with the same delivery id and attempts 1..N+1', async () => {
        const failures = 2;
        receiver.respond = failTimes(failures);
        const { projectId } = await project();
        const message = await insertMessage(server.app, projectId);
        const { eventId } = await emitStatus(server.app, message, 'DELIVERED');
        const delivery = await settled(projectId, eventId);
        assert.equal(delivery.status, 'succeeded');
        const arrivals = receiver.arrivalsFor(delivery.id);
        assert.equal(arrivals.length, failures + 1);
        assert.deepEqual(
          arrivals.map((arrival) => arrival.attempt),
          [1, 2, 3],
        );
        const bodies = new Set(arrivals.map((arrival) => arrival.body));
        assert.equal(bodies.size, 1, 'every attempt sends the same bytes');
        for (const arrival of arrivals) {
          assert.equal(arrival.headers['x-service-delivery'], delivery.id);
          assert.equal(arrival.headers['webhook-id'], delivery.id);
          assert.deepEqual(arrival.verified, [true]);
        }
        assert.equal(delivery.attempt_count, 3);
      });

      it('fails the delivery after the last attempt of the schedule', async () => {
        receiver.respond = failTimes(100, 503);
        const { projectId } = await project();
        const message = await insertMessage(server.app, projectId);
        const { eventId } = await emitStatus(server.app, message, 'SENT');
        const delivery = await settled(projectId, eventId);
        assert.equal(delivery.status, 'failed');
        assert.equal(delivery.due_at, null);
        assert.equal(receiver.arrivalsFor(delivery.id).length, RETRIES + 1);
        assert.deepEqual(
          receiver.arrivalsFor(delivery.id).map((arrival) => arrival.attempt),
          [1, 2, 3, 4],
        );
      });

      it('does not follow redirects, not even to an internal address', async () => {
        const target = await startWebhookReceiver();
        try {
          for (const location of [target.url, 'http://169.254.169.254/latest/meta-data/']) {
            receiver.respond = redirectTo(location, 307);
            const { projectId } = await project();
            const message = await insertMessage(server.app, projectId);
            const { eventId } = await emitStatus(server.app, message, 'SENT');
            const delivery = await settled(projectId, eventId);
            assert.equal(delivery.status, 'failed', '3xx is a failure, retried until the schedule is spent');
            assert.equal(receiver.arrivalsFor(delivery.id).length, RETRIES + 1);
            const attempts = await deliveryAttempts(server.app, delivery.id);
            for (const attempt of attempts) {
              assert.equal(attempt.status_code, 307);
              assert.match(attempt.error ?? '', /redirects are not followed/);
            }
          }
          assert.equal(target.connections, 0, 'the redirect target was never contacted');
        } finally {
          await target.close();
        }
      });

      it('honours a Retry-After longer than the schedule, up to a day', async () => {
        for (const [retryAfter, expectedMs] of [
          ['120', 120_000],
          ['99999999', 24 * 60 * 60 * 1000],
        ] as const) {
          receiver.respond = () => ({ status: 429, headers: { 'retry-after': retryAfter } });
          const { projectId } = await project();
          const message = await insertMessage(server.app, projectId);
          const { eventId } = await emitStatus(server.app, message, 'SENT');
          await waitUntil(async () => (await deliveryOf(projectId, eventId)).attempt_count === 1);
          const delivery = await deliveryOf(projectId, eventId);
          assert.equal(delivery.status, 'pending');
          const attempt = (await deliveryAttempts(server.app, delivery.id))[0]!;
          const wait = delivery.due_at! - (attempt.at + attempt.duration_ms);
          assert.ok(wait >= expectedMs - 1000 && wait <= expectedMs + 1000, `waits ${wait} ms for Retry-After ${retryAfter}`);
        }
      });

      it('keeps the response body’s first KiB and the status code of each attempt', async () => {
        receiver.respond = (_arrival, nth) => (nth === 1 ? { status: 500, body: 'x'.repeat(5000) } : { status: 201, body: 'thanks' });
        const { projectId } = await project();
        const message = await insertMessage(server.app, projectId);
        const { eventId } = await emitStatus(server.app, message, 'SENT');
        const delivery = await settled(projectId, eventId);
        const attempts = await deliveryAttempts(server.app, delivery.id);
        assert.deepEqual(
          attempts.map((attempt) => [attempt.attempt, attempt.status_code, attempt.response_body?.length]),
          [
            [1, 500, 1024],
            [2, 201, 6],
          ],
        );
        assert.equal(attempts[1]!.response_body, 'thanks');
        assert.equal(attempts[0]!.url, receiver.url);
      });
    });

    describe(`receivers that hang (a ${TIMEOUT_MS} ms timeout)`, () => {
      let longTimeout: TestServer;
      before(async () => {
        longTimeout = server;
        server = await startTestServer(kind, {
          env: { SVC_WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms', SVC_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) },
        });
      });
      after(async () => {
        await server.close();
        server = longTimeout;
      });

      it('times out a hanging receiver and records it', async () => {
        receiver.respond = (_arrival, nth) => (nth === 1 ? { hang: true } : { status: 200 });
        const { projectId } = await project();
        const message = await insertMessage(server.app, projectId);
        const { eventId } = await emitStatus(server.app, message, 'READ');
        const delivery = await settled(projectId, eventId);
        assert.equal(delivery.status, 'succeeded');
        const attempts = await deliveryAttempts(server.app, delivery.id);
        assert.equal(attempts.length, 2);
        assert.equal(attempts[0]!.status_code, null);
        assert.match(attempts[0]!.error ?? '', new RegExp(`timeout: no answer within ${TIMEOUT_MS} ms`));
        assert.ok(attempts[0]!.duration_ms >= TIMEOUT_MS - 50 && attempts[0]!.duration_ms < 10_000, 'sanity');
        assert.equal(attempts[1]!.status_code, 200);
      });

      describe('callback URL changes', () => {
        /**
         * A message whose SENT webhook hangs at `first` until it times out, and whose DELIVERED
         * webhook waits meanwhile (a message's events are first attempted in order).
         */
        async function heldBehindSent(first: WebhookReceiver) {
          const { projectId } = await project(first.url);
          const message = await insertMessage(server.app, projectId);
          const sent = await emitStatus(server.app, message, 'SENT');
          await first.waitFor((arrivals) => arrivals.some((arrival) => arrival.body.includes(message.id)));
          const delivered = await emitStatus(server.app, message, 'DELIVERED');
          return { projectId, message, sent, delivered };
        }

        it('sends a delivery not yet attempted to the new callbackUrl', async () => {
          const old = await startWebhookReceiver(hang);
          const fresh = await startWebhookReceiver(ok);
          try {
            const { projectId, message, sent, delivered } = await heldBehindSent(old);
            await setCallbackUrl(server.app, projectId, fresh.url);
            fresh.secrets = await liveSecrets(server.app, projectId);
            const done = await settled(projectId, delivered.eventId);
            assert.equal(done.status, 'succeeded');
            assert.equal(done.url, fresh.url);
            const arrivals = fresh.arrivals.filter((arrival) => arrival.body.includes(message.id));
            assert.deepEqual(
              arrivals.map((arrival) => JSON.parse(arrival.body).status),
              ['DELIVERED'],
              'the SENT delivery keeps the URL it was first attempted at',
            );
            assert.deepEqual(arrivals[0]!.verified, [true]);
            assert.equal((await deliveryOf(projectId, sent.eventId)).url, old.url);
          } finally {
            await old.close();
            await fresh.close();
          }
        });

        it('stops sending once the project removes its callbackUrl', async () => {
          const old = await startWebhookReceiver(hang);
          try {
            const { projectId, sent, delivered } = await heldBehindSent(old);
            await setCallbackUrl(server.app, projectId, null);
            for (const { eventId } of [sent, delivered]) {
              const done = await settled(projectId, eventId);
              assert.equal(done.status, 'failed');
            }
            const attempts = await deliveryAttempts(server.app, (await deliveryOf(projectId, delivered.eventId)).id);
            assert.equal(attempts.length, 1);
            assert.match(attempts[0]!.error ?? '', /not sent: the project has no callbackUrl/);
            assert.equal(attempts[0]!.status_code, null);
            const arrivals = old.arrivals.filter((arrival: Arrival) => arrival.body.includes('"DELIVERED"'));
            assert.equal(arrivals.length, 0);
          } finally {
            await old.close();
          }
        });
      });
    });

    describe('metrics', () => {
      it('counts deliveries and attempts, times attempts, and gauges the queue', async () => {
        receiver.respond = ok;
        const { projectId } = await project();
        const message = await insertMessage(server.app, projectId);
        const { eventId } = await emitStatus(server.app, message, 'SENT');
        await settled(projectId, eventId);
        const reply = await server.call('GET', '/metrics');
        assert.equal(reply.status, 200);
        assert.match(reply.text, /svc_webhook_deliveries_total\{outcome="succeeded"\} [1-9]\d*/);
        assert.match(reply.text, /svc_webhook_attempts_total\{outcome="acknowledged"\} [1-9]\d*/);
        assert.match(reply.text, /svc_webhook_attempt_duration_seconds_bucket\{[^}]*outcome="acknowledged"[^}]*\} [1-9]\d*/);
        assert.match(reply.text, /svc_webhook_queue_depth \d+/);
        assert.match(reply.text, /svc_webhook_oldest_due_age_seconds [\d.e+-]+/);
        assert.match(reply.text, /svc_webhook_attempts_in_flight \d+/);
      });
    });
  });
}
