import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/domain/ids.ts';
import { newUuid7 } from '../../src/domain/uuid7.ts';
import { webhookPayload } from '../../src/domain/webhookPayload.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import {
  deliveryRows,
  emitStatus,
  insertMessage,
  liveSecrets,
  setCallbackUrl,
  waitUntil,
} from '../support/webhookEvents.ts';
import { failTimes, ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';
import { attemptOf, storedDelivery, storedDeliveryId } from '../../src/db/deliveryIds.ts';

// Bytes per message (issue 19, migration 0023): a message status event's delivery stores no body
// (rebuilt from its event and message, the same bytes on every attempt and on GET), and keeps its
// latest attempt in its own row (a delivery answered at once has no webhook_attempts row), while
// rows written before keep working as they were.

for (const kind of databaseKinds()) {
  describe(`compact webhook deliveries (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;

    before(async () => {
      server = await startTestServer(kind, { env: { SVC_WEBHOOK_RETRY_SCHEDULE: '20ms,20ms,20ms' } });
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    async function project() {
      const created = await server.createProject();
      await setCallbackUrl(server.app, created.projectId, receiver.url);
      receiver.secrets = await liveSecrets(server.app, created.projectId);
      return created;
    }

    async function settled(projectId: string, count: number) {
      await waitUntil(async () => {
        const rows = await deliveryRows(server.app, projectId);
        return rows.length === count && rows.every((row) => row.status !== 'pending');
      });
      return deliveryRows(server.app, projectId);
    }

    async function attemptRows(deliveryId: string) {
      const rows = await server.app.database.db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('delivery_id', '=', storedDeliveryId(server.app.database.db, deliveryId) as string)
        .orderBy('attempt')
        .execute();
      return rows.map(attemptOf);
    }

    it('rebuilds the body from the event: the same signed bytes on every attempt and on GET', async () => {
      receiver.respond = failTimes(2);
      const { projectId, key } = await project();
      const message = await insertMessage(server.app, projectId);
      const error = { code: '131026', title: 'Message undeliverable', message: 'The number is not on WhatsApp.' };
      const occurredAt = Date.parse('2026-11-26T10:00:00.123Z');
      const { event } = await emitStatus(server.app, message, 'FAILED', { occurredAt, error });
      const [row] = await settled(projectId, 1);
      assert.equal(row!.payload, '', 'no body stored');
      assert.equal(row!.status, 'succeeded');

      const arrivals = receiver.arrivalsFor(row!.id);
      assert.equal(arrivals.length, 3);
      // What enqueueing built and stored before migration 0023, byte for byte.
      const expected = webhookPayload(event);
      for (const arrival of arrivals) {
        assert.equal(arrival.body, expected);
        assert.ok(arrival.verified.some(Boolean), 'signed over these bytes');
      }
      assert.deepEqual(
        arrivals.map((arrival) => arrival.headers['webhook-id']),
        [row!.id, row!.id, row!.id],
      );
      assert.deepEqual(JSON.parse(expected).error, error);

      const reply = await server.call('GET', `/v1/webhook-deliveries/${row!.id}`, { key });
      assert.equal(reply.status, 200);
      assert.equal(reply.body.payload, expected);
      assert.deepEqual(
        reply.body.attempts.map((attempt: { attempt: number; statusCode: number; responseBody?: string }) => [
          attempt.attempt,
          attempt.statusCode,
          attempt.responseBody,
        ]),
        [
          [1, 500, 'fail 1'],
          [2, 500, 'fail 2'],
          [3, 204, ''],
        ],
      );
      // The earlier attempts moved to webhook_attempts, the latest is in the delivery's row.
      assert.deepEqual(
        (await attemptRows(row!.id)).map((attempt) => attempt.attempt),
        [1, 2],
      );
      // The events feed shows the same bytes.
      const feed = await server.call('GET', '/v1/events', { key });
      assert.match(feed.text, new RegExp(`"payload":${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    });

    it('a delivery answered at its first attempt has no attempts row, yet shows its attempt', async () => {
      receiver.respond = ok;
      const { projectId, key } = await project();
      const message = await insertMessage(server.app, projectId);
      await emitStatus(server.app, message, 'SENT');
      const [row] = await settled(projectId, 1);
      assert.equal(row!.status, 'succeeded');
      assert.deepEqual(await attemptRows(row!.id), []);

      const one = await server.call('GET', `/v1/webhook-deliveries/${row!.id}`, { key });
      assert.equal(one.status, 200);
      assert.equal(one.body.attempts.length, 1);
      const [attempt] = one.body.attempts;
      assert.deepEqual(Object.keys(attempt).sort(), ['at', 'attempt', 'durationMs', 'responseBody', 'statusCode', 'url']);
      assert.equal(attempt.attempt, 1);
      assert.equal(attempt.statusCode, 200);
      assert.equal(attempt.responseBody, 'ok');
      assert.equal(attempt.url, receiver.url);
      assert.match(attempt.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Date.parse(attempt.at) >= Date.parse(one.body.createdAt));

      const list = await server.call('GET', '/v1/webhook-deliveries', { key });
      assert.equal(list.status, 200);
      const { responseBody: _omitted, ...listed } = attempt;
      assert.deepEqual(list.body[0].attempts, [listed], 'lists show attempts without the answer');
    });

    it('a delivery written before migration 0023 (body and attempts stored) is sent and shown as it was', async () => {
      receiver.respond = ok;
      const { projectId, key } = await project();
      const message = await insertMessage(server.app, projectId);
      const now = Date.now();
      const id = newUuid7(now);
      // A stored body that differs from what the event would rebuild: the stored one wins.
      const payload = JSON.stringify({ event: 'message.sent', message_id: message.id, stored: true });
      await server.app.database.db
        .insertInto('webhook_deliveries')
        .values(storedDelivery(server.app.database.db, {
          id,
          project_id: projectId,
          event_id: newId('evt', now),
          message_id: message.id,
          template_id: null,
          endpoint_id: null,
          event: 'message.sent',
          url: receiver.url,
          payload,
          status: 'pending',
          attempt_count: 1,
          due_at: now,
          lease_expires_at: null,
          created_at: now - 1000,
          updated_at: now - 500,
        }))
        .execute();
      await server.app.database.db
        .insertInto('webhook_attempts')
        .values({
          id: newId('att', now),
          delivery_id: storedDeliveryId(server.app.database.db, id) as string,
          attempt: 1,
          at: now - 600,
          url: receiver.url,
          status_code: 503,
          duration_ms: 12,
          error: 'HTTP 503',
          response_body: 'busy',
        })
        .execute();
      server.app.notifier.wakeLocal('webhooks');
      await settled(projectId, 1);

      const [arrival] = receiver.arrivalsFor(id);
      assert.equal(arrival!.body, payload);
      assert.ok(arrival!.verified.some(Boolean));
      assert.equal(arrival!.attempt, 2);

      const reply = await server.call('GET', `/v1/webhook-deliveries/${id}`, { key });
      assert.equal(reply.body.payload, payload);
      assert.deepEqual(
        reply.body.attempts.map((attempt: { attempt: number; statusCode: number; error?: string; responseBody?: string }) => [
          attempt.attempt,
          attempt.statusCode,
          attempt.error,
          attempt.responseBody,
        ]),
        [
          [1, 503, 'HTTP 503', 'busy'],
          [2, 200, undefined, 'ok'],
        ],
      );
      assert.equal((await attemptRows(id)).length, 1, 'the new attempt is in the delivery row');
    });

    it('a failed delivery retried through the API is attempted again with the same bytes', async () => {
      receiver.respond = failTimes(4);
      const { projectId, key } = await project();
      const message = await insertMessage(server.app, projectId);
      await emitStatus(server.app, message, 'READ');
      const [row] = await settled(projectId, 1);
      assert.equal(row!.status, 'failed');
      receiver.respond = ok;
      const retry = await server.call('POST', `/v1/webhook-deliveries/${row!.id}/retry`, { key });
      assert.equal(retry.status, 202);
      await waitUntil(async () => (await deliveryRows(server.app, projectId))[0]!.status === 'succeeded');
      const bodies = new Set(receiver.arrivalsFor(row!.id).map((arrival) => arrival.body));
      assert.equal(bodies.size, 1);
      const reply = await server.call('GET', `/v1/webhook-deliveries/${row!.id}`, { key });
      assert.equal(reply.body.payload, [...bodies][0]);
      assert.deepEqual(
        reply.body.attempts.map((attempt: { attempt: number }) => attempt.attempt),
        [1, 2, 3, 4, 5],
      );
      assert.equal((await attemptRows(row!.id)).length, 4);
    });
  });
}
