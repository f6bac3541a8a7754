import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { nextPageOf } from '../support/http.ts';
import {
  deliveryRows,
  emitStatus,
  insertMessage,
  liveSecrets,
  setCallbackUrl,
  waitUntil,
} from '../support/webhookEvents.ts';
import { failTimes, ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

const DELIVERY_KEYS = [
  'attempts',
  'createdAt',
  'endpointId',
  'event',
  'eventId',
  'id',
  'messageId',
  'status',
  'templateId',
  'updatedAt',
  'url',
];

for (const kind of databaseKinds()) {
  describe(`webhook deliveries API (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;

    before(async () => {
      server = await startTestServer(kind, {
        env: { SVC_WEBHOOK_RETRY_SCHEDULE: '50ms' },
      });
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

    async function allSettled(projectId: string, count: number) {
      await waitUntil(async () => {
        const rows = await deliveryRows(server.app, projectId);
        return rows.length === count && rows.every((row) => row.status !== 'pending');
      });
    }

    describe('happy path', () => {
      it('shows a delivery with every attempt', async () => {
        receiver.respond = (_arrival, nth) => (nth === 1 ? { status: 500, body: 'try later' } : { status: 200, body: 'ok' });
        const { projectId, key } = await project();
        const message = await insertMessage(server.app, projectId);
        const { eventId } = await emitStatus(server.app, message, 'DELIVERED');
        await allSettled(projectId, 1);
        const [row] = await deliveryRows(server.app, projectId);

        const reply = await server.call('GET', `/v1/webhook-deliveries/${row!.id}`, { key });
        assert.equal(reply.status, 200);
        const delivery = reply.body;
        assert.deepEqual(Object.keys(delivery).sort(), [...DELIVERY_KEYS, 'payload'].sort(), 'the detail adds the body sent');
        assert.equal(delivery.id, row!.id);
        assert.equal(delivery.eventId, eventId);
        // The exact bytes the receiver got on each attempt.
        assert.equal(delivery.payload, receiver.arrivalsFor(row!.id)[0]!.body);
        assert.equal(JSON.parse(delivery.payload).message_id, message.id);
        assert.equal(delivery.event, 'message.delivered');
        assert.equal(delivery.messageId, message.id);
        assert.equal(delivery.endpointId, null, 'sent to the callbackUrl');
        assert.equal(delivery.templateId, null);
        assert.equal(delivery.url, receiver.url);
        assert.equal(delivery.status, 'succeeded');
        assert.match(delivery.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.equal(delivery.attempts.length, 2);
        const [failed, succeeded] = delivery.attempts;
        assert.equal(failed.attempt, 1);
        assert.equal(failed.statusCode, 500);
        assert.equal(failed.responseBody, 'try later');
        assert.match(failed.error, /HTTP 500/);
        assert.equal(typeof failed.durationMs, 'number');
        assert.match(failed.at, /Z$/);
        assert.equal(failed.url, receiver.url);
        assert.equal(succeeded.attempt, 2);
        assert.equal(succeeded.statusCode, 200);
        assert.equal(succeeded.responseBody, 'ok');
        assert.ok(!('error' in succeeded));
        assert.ok(Date.parse(succeeded.at) >= Date.parse(failed.at));
      });

      it('lists deliveries newest first, paged with Link, filtered by status, event and messageId', async () => {
        receiver.respond = ok;
        const { projectId, key } = await project();
        const first = await insertMessage(server.app, projectId);
        const second = await insertMessage(server.app, projectId);
        for (const status of ['SENT', 'DELIVERED', 'READ'] as const) await emitStatus(server.app, first, status);
        await emitStatus(server.app, second, 'SENT');
        await emitStatus(server.app, second, 'FAILED', { error: { code: '131026', title: 't', message: 'm' } });
        await allSettled(projectId, 5);

        const all = await server.call('GET', '/v1/webhook-deliveries', { key });
        assert.equal(all.status, 200);
        assert.ok(Array.isArray(all.body));
        assert.equal(all.body.length, 5);
        const ids = all.body.map((delivery: any) => delivery.id);
        assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
        assert.deepEqual(
          all.body.map((delivery: any) => delivery.event),
          ['message.failed', 'message.sent', 'message.read', 'message.delivered', 'message.sent'],
        );
        for (const delivery of all.body) {
          assert.deepEqual(Object.keys(delivery).sort(), DELIVERY_KEYS);
          for (const attempt of delivery.attempts) assert.ok(!('responseBody' in attempt), 'lists stay light');
        }
        assert.equal(all.headers.get('link'), null);

        const seen: string[] = [];
        let path: string | undefined = '/v1/webhook-deliveries?limit=2';
        while (path) {
          const page = await server.call('GET', path, { key });
          assert.equal(page.status, 200);
          assert.ok(page.body.length <= 2);
          seen.push(...page.body.map((delivery: any) => delivery.id));
          path = nextPageOf(page);
        }
        assert.deepEqual(seen, ids);

        const byMessage = await server.call('GET', `/v1/webhook-deliveries?messageId=${first.id}`, { key });
        assert.deepEqual(
          byMessage.body.map((delivery: any) => delivery.event),
          ['message.read', 'message.delivered', 'message.sent'],
        );
        const byEvent = await server.call('GET', '/v1/webhook-deliveries?event=message.sent', { key });
        assert.deepEqual(
          byEvent.body.map((delivery: any) => delivery.messageId),
          [second.id, first.id],
        );
        const succeeded = await server.call('GET', '/v1/webhook-deliveries?status=succeeded&limit=200', { key });
        assert.equal(succeeded.body.length, 5);
        const none = await server.call('GET', '/v1/webhook-deliveries?status=failed', { key });
        assert.deepEqual(none.body, []);
        const paged = await server.call('GET', `/v1/webhook-deliveries?messageId=${first.id}&limit=1`, { key });
        assert.match(paged.headers.get('link') ?? '', new RegExp(`messageId=${first.id}`));

        // since/until filter on creation time, like messages.
        const oldest = all.body.at(-1).createdAt;
        const newest = all.body[0].createdAt;
        const since = await server.call('GET', `/v1/webhook-deliveries?since=${encodeURIComponent(newest)}`, { key });
        assert.ok(since.body.length >= 1 && since.body.every((d: any) => d.createdAt >= newest));
        const until = await server.call('GET', `/v1/webhook-deliveries?until=${encodeURIComponent(oldest)}`, { key });
        assert.deepEqual(until.body, []);
        const bad = await server.call('GET', '/v1/webhook-deliveries?since=yesterday', { key });
        assert.equal(bad.status, 400);
        const upper = await server.call('GET', `/v1/webhook-deliveries/${all.body[0].id.toUpperCase()}`, { key });
        assert.equal(upper.status, 200);
        assert.equal(upper.body.id, all.body[0].id);
      });

      it('retries a failed delivery: 202, same id, the next attempt number', async () => {
        receiver.respond = failTimes(2);
        const { projectId, key } = await project();
        const message = await insertMessage(server.app, projectId);
        await emitStatus(server.app, message, 'SENT');
        await allSettled(projectId, 1);
        const [row] = await deliveryRows(server.app, projectId);
        assert.equal(row!.status, 'failed', 'two attempts on a one-retry schedule');

        // In capitals, as GET reads it too: the same delivery.
        const retried = await server.call('POST', `/v1/webhook-deliveries/${row!.id.toUpperCase()}/retry`, { key });
        assert.equal(retried.status, 202);
        assert.equal(retried.body.id, row!.id);
        assert.equal(retried.body.status, 'pending');
        assert.match(retried.body.nextAttemptAt, /Z$/);
        await allSettled(projectId, 1);

        const delivery = (await server.call('GET', `/v1/webhook-deliveries/${row!.id}`, { key })).body;
        assert.equal(delivery.status, 'succeeded');
        assert.deepEqual(
          delivery.attempts.map((attempt: any) => attempt.statusCode),
          [500, 500, 204],
        );
        assert.ok(!('nextAttemptAt' in delivery));
        const arrivals = receiver.arrivalsFor(row!.id);
        assert.deepEqual(
          arrivals.map((arrival) => arrival.attempt),
          [1, 2, 3],
        );
        assert.equal(new Set(arrivals.map((arrival) => arrival.body)).size, 1);
        for (const arrival of arrivals) assert.deepEqual(arrival.verified, [true]);
      });

      it('retries a succeeded delivery too', async () => {
        receiver.respond = ok;
        const { projectId, key } = await project();
        const message = await insertMessage(server.app, projectId);
        await emitStatus(server.app, message, 'READ');
        await allSettled(projectId, 1);
        const [row] = await deliveryRows(server.app, projectId);
        const retried = await server.call('POST', `/v1/webhook-deliveries/${row!.id}/retry`, { key });
        assert.equal(retried.status, 202);
        await waitUntil(async () => (await deliveryRows(server.app, projectId))[0]!.attempt_count === 2);
        await allSettled(projectId, 1);
        assert.deepEqual(
          receiver.arrivalsFor(row!.id).map((arrival) => [arrival.attempt, arrival.headers['x-service-delivery']]),
          [
            [1, row!.id],
            [2, row!.id],
          ],
        );
      });
    });

    describe('errors', () => {
      it('is 404 for an unknown or malformed id', async () => {
        const { key } = await project();
        for (const id of ['01a2080e-bdbc-71f4-ac95-f5b22776833e', 'nope', "'%20or%201%3D1", 'x'.repeat(150)]) {
          for (const [method, path] of [
            ['GET', `/v1/webhook-deliveries/${id}`],
            ['POST', `/v1/webhook-deliveries/${id}/retry`],
          ] as const) {
            const reply = await server.call(method, path, { key });
            assert.equal(reply.status, 404, `${method} ${path}`);
            assert.equal(reply.body.code, 'not_found');
          }
        }
      });

      it('validates the query', async () => {
        const { key } = await project();
        for (const query of ['status=done', 'event=message.queued', 'limit=0', 'limit=201', 'cursor=%%%', 'colour=red']) {
          const reply = await server.call('GET', `/v1/webhook-deliveries?${query}`, { key });
          assert.equal(reply.status, 400, query);
          assert.equal(reply.body.code, 'validation_failed');
        }
      });
    });

    describe('security', () => {
      it("never shows or retries another project's deliveries", async () => {
        receiver.respond = ok;
        const alice = await project();
        const bob = await project();
        const message = await insertMessage(server.app, bob.projectId);
        await emitStatus(server.app, message, 'SENT');
        await allSettled(bob.projectId, 1);
        const [row] = await deliveryRows(server.app, bob.projectId);

        assert.equal((await server.call('GET', `/v1/webhook-deliveries/${row!.id}`, { key: alice.key })).status, 404);
        const retry = await server.call('POST', `/v1/webhook-deliveries/${row!.id}/retry`, { key: alice.key });
        assert.equal(retry.status, 404);
        assert.deepEqual((await server.call('GET', '/v1/webhook-deliveries', { key: alice.key })).body, []);
        const byMessage = await server.call('GET', `/v1/webhook-deliveries?messageId=${message.id}`, { key: alice.key });
        assert.deepEqual(byMessage.body, []);
        assert.equal((await deliveryRows(server.app, bob.projectId))[0]!.attempt_count, 1, 'no attempt was added');
      });

      it('is 401 without a valid key', async () => {
        for (const [method, path] of [
          ['GET', '/v1/webhook-deliveries'],
          ['GET', '/v1/webhook-deliveries/01a2080e-bdbc-71f4-ac95-f5b22776833e'],
          ['POST', '/v1/webhook-deliveries/01a2080e-bdbc-71f4-ac95-f5b22776833e/retry'],
        ] as const) {
          for (const key of [undefined, 'svc_live_' + 'z'.repeat(40)]) {
            const reply = await server.call(method, path, { key });
            assert.equal(reply.status, 401, `${method} ${path}`);
            assert.equal(reply.body.code, 'unauthorized');
          }
        }
      });

      it('documents the routes in OpenAPI', async () => {
        const doc = (await server.call('GET', '/openapi.json')).body;
        assert.ok(doc.paths['/v1/webhook-deliveries'].get);
        assert.ok(doc.paths['/v1/webhook-deliveries/{id}'].get.responses['404']);
        assert.ok(doc.paths['/v1/webhook-deliveries/{id}/retry'].post.responses['202']);
      });
    });
  });
}
