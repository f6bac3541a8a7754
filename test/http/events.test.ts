import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { nextPageOf } from '../support/http.ts';
import { createSender, sendBody, waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

const FAST_SANDBOX = {
  SVC_SANDBOX_DELIVERY_DELAY_MS: '20',
  SVC_SANDBOX_READ_DELAY_MS: '20',
  SVC_WEBHOOK_RETRY_SCHEDULE: '50ms',
};

for (const kind of databaseKinds()) {
  describe(`GET /v1/events (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;

    before(async () => {
      server = await startTestServer(kind, { env: FAST_SANDBOX });
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    /** A new project's message, sent. */
    async function sentMessage(to?: string) {
      const sender = await createSender(server);
      const sent = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, to) });
      assert.equal(sent.status, 202, sent.text);
      return { sender, id: sent.body.id as string };
    }

    describe('happy path', () => {
      it('lists each status change oldest first, its payload the webhook body byte for byte', async () => {
        const sender = await createSender(server);
        const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', {
          key: sender.key,
          body: { callbackUrl: receiver.url },
        });
        assert.equal(saved.status, 200, saved.text);
        const sent = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
        await waitForStatus(server, sender.key, sent.body.id, 'READ');
        const bodies = await until('three webhooks', () => {
          const mine = receiver.arrivals.filter((arrival) => arrival.body.includes(sent.body.id));
          return mine.length >= 3 && mine;
        });

        const reply = await server.call('GET', '/v1/events', { key: sender.key });
        assert.equal(reply.status, 200, reply.text);
        assert.equal(reply.headers.get('link'), null);
        const events = reply.body as { id: string; type: string; occurredAt: string; payload: any }[];
        assert.deepEqual(
          events.map((event) => event.type),
          ['message.sent', 'message.delivered', 'message.read'],
        );
        assert.deepEqual(events.map((event) => event.id), events.map((event) => event.id).sort());
        for (const event of events) {
          assert.deepEqual(Object.keys(event), ['id', 'type', 'occurredAt', 'payload']);
          assert.equal(event.payload.event, event.type);
          assert.equal(event.payload.occurred_at, event.occurredAt);
          const webhook = bodies.find((arrival) => arrival.headers['x-service-event'] === event.type);
          assert.equal(JSON.stringify(event.payload), webhook?.body);
        }
        const deliveries = await server.call('GET', `/v1/webhook-deliveries?messageId=${sent.body.id}`, { key: sender.key });
        assert.deepEqual(
          deliveries.body.map((delivery: { eventId: string }) => delivery.eventId).sort(),
          events.map((event) => event.id),
        );
      });

      it('holds the events of a project without a callback URL, FAILED ones with their error', async () => {
        const { sender, id } = await sentMessage('+15550000001');
        await waitForStatus(server, sender.key, id, 'FAILED');
        const reply = await server.call('GET', '/v1/events', { key: sender.key });
        const failed = reply.body.find((event: { type: string }) => event.type === 'message.failed');
        assert.equal(failed.payload.message_id, id);
        assert.equal(failed.payload.status, 'FAILED');
        assert.equal(failed.payload.error.code, '131026');
      });

      it('holds message.canceled, its payload the webhook body', async () => {
        const sender = await createSender(server);
        await server.call('PUT', '/v1/projects/me/provider-credentials', { key: sender.key, body: { callbackUrl: receiver.url } });
        const sendAt = new Date(Date.now() + 3_600_000).toISOString();
        const sent = await server.call('POST', '/v1/messages', { key: sender.key, body: { ...sendBody(sender), sendAt } });
        assert.equal(sent.status, 202, sent.text);
        const canceled = await server.call('POST', `/v1/messages/${sent.body.id}/cancel`, { key: sender.key });
        assert.equal(canceled.status, 200, canceled.text);
        const webhook = await until('the canceled webhook', () =>
          receiver.arrivals.find((arrival) => arrival.body.includes(sent.body.id) && arrival.headers['x-service-event'] === 'message.canceled'),
        );
        const events = (await server.call('GET', '/v1/events', { key: sender.key })).body;
        assert.deepEqual(events.map((event: { type: string }) => event.type), ['message.canceled']);
        assert.equal(events[0].payload.status, 'CANCELED');
        assert.equal(JSON.stringify(events[0].payload), webhook.body);
      });

      it('pages with after and limit, announcing the next page in Link', async () => {
        const { sender, id } = await sentMessage();
        await waitForStatus(server, sender.key, id, 'READ');
        const all = (await server.call('GET', '/v1/events', { key: sender.key })).body as { id: string }[];
        assert.equal(all.length, 3);

        const seen: string[] = [];
        let path: string | undefined = '/v1/events?limit=1';
        while (path) {
          const page = await server.call('GET', path, { key: sender.key });
          assert.equal(page.status, 200, page.text);
          seen.push(...page.body.map((event: { id: string }) => event.id));
          path = nextPageOf(page);
        }
        assert.deepEqual(seen, all.map((event) => event.id));

        const rest = await server.call('GET', `/v1/events?after=${all[0]!.id}`, { key: sender.key });
        assert.deepEqual(rest.body.map((event: { id: string }) => event.id), all.slice(1).map((event) => event.id));
        const none = await server.call('GET', `/v1/events?after=${all[2]!.id}`, { key: sender.key });
        assert.deepEqual(none.body, []);
      });
    });

    describe('errors', () => {
      it('refuses a malformed after, an out-of-range limit and unknown parameters with 400', async () => {
        const { key } = await server.createProject();
        for (const query of ['after=nope', 'after=evt_x%27%20or%201=1--', 'limit=0', 'limit=201', 'limit=ten', 'since=2026-01-01T00:00:00Z']) {
          const reply = await server.call('GET', `/v1/events?${query}`, { key });
          assert.equal(reply.status, 400, query);
          assert.equal(reply.body.code, 'validation_failed', query);
        }
      });
    });

    describe('security', () => {
      it('shows a project only its own events, whatever after it is given', async () => {
        const { sender, id } = await sentMessage();
        await waitForStatus(server, sender.key, id, 'READ');
        const theirs = (await server.call('GET', '/v1/events', { key: sender.key })).body as { id: string }[];
        const other = await server.createProject('Other');
        const mine = await server.call('GET', '/v1/events', { key: other.key });
        assert.deepEqual(mine.body, []);
        const afterTheirs = await server.call('GET', `/v1/events?after=${theirs[0]!.id}`, { key: other.key });
        assert.deepEqual(afterTheirs.body, []);
      });

      it('answers 401 without a key and with a revoked one', async () => {
        assert.equal((await server.call('GET', '/v1/events')).status, 401);
        const { key } = await server.createProject();
        const second = await server.call('POST', '/v1/api-keys', { key, body: { name: 'second' } });
        const revoked = await server.call('DELETE', `/v1/api-keys/${second.body.id}`, { key });
        assert.equal(revoked.status, 200, revoked.text);
        const reply = await server.call('GET', '/v1/events', { key: second.body.key });
        assert.equal(reply.status, 401);
      });
    });
  });
}
