import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { nextPageOf } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { deliveryRows, emitStatus, insertMessage, liveSecrets, setCallbackUrl, waitUntil } from '../support/webhookEvents.ts';
import { ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

const ENDPOINT_KEYS = ['allEvents', 'createdAt', 'description', 'enabled', 'events', 'id', 'updatedAt', 'url'];

for (const kind of databaseKinds()) {
  describe(`webhook endpoints (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;

    before(async () => {
      server = await startTestServer(kind, {
        env: { SVC_WEBHOOK_RETRY_SCHEDULE: '50ms', SVC_WEBHOOK_TIMEOUT_MS: '1000' },
      });
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    async function project() {
      const created = await server.createProject();
      receiver.secrets = await liveSecrets(server.app, created.projectId);
      return created;
    }

    async function createEndpoint(key: string, body: Record<string, unknown>) {
      const reply = await server.call('POST', '/v1/webhook-endpoints', { key, body });
      assert.equal(reply.status, 201, reply.text);
      return reply.body;
    }

    async function settled(projectId: string, count: number) {
      await waitUntil(async () => {
        const rows = await deliveryRows(server.app, projectId);
        return rows.length === count && rows.every((row) => row.status !== 'pending');
      }, 15_000, `${count} settled deliveries`);
      return deliveryRows(server.app, projectId);
    }

    describe('happy path', () => {
      it('creates, reads, lists, changes and deletes an endpoint', async () => {
        const { key } = await project();
        const created = await createEndpoint(key, {
          url: `${receiver.url}/a`,
          events: ['message.failed', 'template.rejected', 'message.failed'],
          description: 'ops pager',
        });
        assert.deepEqual(Object.keys(created).sort(), ENDPOINT_KEYS);
        assert.match(created.id, /^we_[0-9a-z]{26}$/);
        assert.deepEqual(created.events, ['message.failed', 'template.rejected'], 'duplicates dropped');
        assert.equal(created.allEvents, false);
        assert.equal(created.enabled, true);
        assert.equal(created.description, 'ops pager');
        assert.match(created.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

        const all = await createEndpoint(key, { url: `${receiver.url}/b` });
        assert.equal(all.allEvents, true);
        assert.ok(all.events.includes('message.sent') && all.events.includes('template.approved'));
        assert.equal(all.description, null);

        const read = await server.call('GET', `/v1/webhook-endpoints/${created.id}`, { key });
        assert.equal(read.status, 200);
        assert.deepEqual(read.body, created);

        const seen: string[] = [];
        let path: string | undefined = '/v1/webhook-endpoints?limit=1';
        while (path) {
          const page = await server.call('GET', path, { key });
          assert.equal(page.status, 200);
          seen.push(...page.body.map((endpoint: any) => endpoint.id));
          path = nextPageOf(page);
        }
        assert.deepEqual(seen, [all.id, created.id], 'newest first, paged');

        const patched = await server.call('PATCH', `/v1/webhook-endpoints/${created.id}`, {
          key,
          body: { enabled: false, events: null, url: `${receiver.url}/moved` },
        });
        assert.equal(patched.status, 200, patched.text);
        assert.equal(patched.body.enabled, false);
        assert.equal(patched.body.allEvents, true);
        assert.equal(patched.body.url, `${receiver.url}/moved`);
        assert.equal(patched.body.description, 'ops pager', 'unsent fields stay');

        const deleted = await server.call('DELETE', `/v1/webhook-endpoints/${created.id}`, { key });
        assert.equal(deleted.status, 204);
        assert.equal(deleted.text, '');
        assert.equal((await server.call('GET', `/v1/webhook-endpoints/${created.id}`, { key })).status, 404);
        assert.equal((await server.call('DELETE', `/v1/webhook-endpoints/${created.id}`, { key })).status, 404);
      });

      it('fans each event out to the callbackUrl and every enabled endpoint whose events match', async () => {
        receiver.respond = ok;
        const { projectId, key } = await project();
        await setCallbackUrl(server.app, projectId, `${receiver.url}/callback`);
        const every = await createEndpoint(key, { url: `${receiver.url}/every` });
        const failures = await createEndpoint(key, { url: `${receiver.url}/failures`, events: ['message.failed'] });
        await createEndpoint(key, { url: `${receiver.url}/off`, enabled: false });

        const message = await insertMessage(server.app, projectId);
        await emitStatus(server.app, message, 'SENT');
        await emitStatus(server.app, message, 'FAILED', { error: { code: '131026', title: 't', message: 'm' } });
        const rows = await settled(projectId, 5);
        const routes = rows.map((row) => `${row.event} ${row.endpoint_id ?? 'callback'}`).sort();
        const expected = [
          `message.failed ${every.id}`,
          `message.failed ${failures.id}`,
          'message.failed callback',
          `message.sent ${every.id}`,
          'message.sent callback',
        ];
        assert.deepEqual(routes, expected.sort());
        assert.ok(rows.every((row) => row.status === 'succeeded'));
        assert.equal(new Set(rows.map((row) => row.id)).size, 5, 'one delivery id per destination');

        const arrivals = receiver.arrivals.filter((arrival) => rows.some((row) => row.id === arrival.deliveryId));
        assert.deepEqual(arrivals.map((arrival) => arrival.path).sort(), [
          '/hooks/callback',
          '/hooks/callback',
          '/hooks/every',
          '/hooks/every',
          '/hooks/failures',
        ]);
        for (const arrival of arrivals) {
          assert.deepEqual(arrival.verified, [true], 'signed with the project’s secret');
          assert.equal(arrival.headers['user-agent'], 'Service/1.0');
          assert.equal(arrival.headers['x-service-event'], JSON.parse(arrival.body).event);
        }
        const failedBodies = arrivals.filter((arrival) => arrival.headers['x-service-event'] === 'message.failed');
        assert.equal(new Set(failedBodies.map((arrival) => arrival.body)).size, 1, 'the same body everywhere');

        const view = await server.call('GET', `/v1/webhook-deliveries?event=message.failed`, { key });
        assert.deepEqual(
          view.body.map((delivery: any) => delivery.endpointId).sort(),
          [every.id, failures.id, null].sort(),
        );
        for (const delivery of view.body) assert.equal(delivery.messageId, message.id);
      });

      it('sends a signed test event to one endpoint', async () => {
        receiver.respond = ok;
        const { projectId, key } = await project();
        await setCallbackUrl(server.app, projectId, `${receiver.url}/callback`);
        const endpoint = await createEndpoint(key, { url: `${receiver.url}/test`, events: ['message.read'] });
        const reply = await server.call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
        assert.equal(reply.status, 202, reply.text);
        const { deliveryId } = reply.body;
        await receiver.waitFor((arrivals) => arrivals.some((arrival) => arrival.deliveryId === deliveryId));
        const [arrival] = receiver.arrivalsFor(deliveryId);
        assert.equal(arrival!.path, '/hooks/test');
        assert.deepEqual(arrival!.verified, [true]);
        assert.equal(arrival!.headers['x-service-event'], 'webhook.test');
        const body = JSON.parse(arrival!.body);
        assert.equal(body.event, 'webhook.test');
        assert.equal(body.endpoint_id, endpoint.id);
        assert.match(body.event_id, /^evt_/);
        assert.match(body.occurred_at, /Z$/);

        await settled(projectId, 1);
        const delivery = await server.call('GET', `/v1/webhook-deliveries/${deliveryId}`, { key });
        assert.equal(delivery.status, 200);
        assert.equal(delivery.body.event, 'webhook.test');
        assert.equal(delivery.body.endpointId, endpoint.id);
        assert.equal(delivery.body.messageId, null);
        assert.equal(delivery.body.templateId, null);
        assert.equal(delivery.body.status, 'succeeded');
      });

      it('sends a manual retry to the endpoint’s current URL', async () => {
        receiver.respond = (arrival) => (arrival.path === '/hooks/old' ? { status: 500 } : { status: 200 });
        const { projectId, key } = await project();
        const endpoint = await createEndpoint(key, { url: `${receiver.url}/old` });
        const message = await insertMessage(server.app, projectId);
        await emitStatus(server.app, message, 'SENT');
        const [failed] = await settled(projectId, 1);
        assert.equal(failed!.status, 'failed', 'both attempts of the schedule failed');

        await server.call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { key, body: { url: `${receiver.url}/new` } });
        const retry = await server.call('POST', `/v1/webhook-deliveries/${failed!.id}/retry`, { key });
        assert.equal(retry.status, 202);
        await waitUntil(async () => (await deliveryRows(server.app, projectId))[0]!.status === 'succeeded');
        assert.deepEqual(
          receiver.arrivalsFor(failed!.id).map((arrival) => arrival.path),
          ['/hooks/old', '/hooks/old', '/hooks/new'],
        );
      });

      it('sends nothing to a disabled or deleted endpoint, and fails its pending deliveries', async () => {
        receiver.respond = (arrival) => (arrival.path === '/hooks/doomed' ? { hang: true } : { status: 200 });
        const { projectId, key } = await project();
        const disabled = await createEndpoint(key, { url: `${receiver.url}/disabled`, enabled: false });
        const message = await insertMessage(server.app, projectId);
        await emitStatus(server.app, message, 'SENT');
        assert.deepEqual(await deliveryRows(server.app, projectId), [], 'no delivery for a disabled endpoint');

        const doomed = await createEndpoint(key, { url: `${receiver.url}/doomed` });
        await emitStatus(server.app, message, 'DELIVERED');
        await receiver.waitFor((arrivals) => arrivals.some((arrival) => arrival.path === '/hooks/doomed'));
        // Deleted while its first attempt hangs: the retry after the timeout is not sent.
        assert.equal((await server.call('DELETE', `/v1/webhook-endpoints/${doomed.id}`, { key })).status, 204);
        await server.call('PATCH', `/v1/webhook-endpoints/${disabled.id}`, { key, body: { enabled: true } });
        await emitStatus(server.app, message, 'READ');
        const rows = await settled(projectId, 2);
        const ofDoomed = rows.find((row) => row.endpoint_id === doomed.id)!;
        assert.equal(ofDoomed.status, 'failed');
        assert.equal(receiver.arrivals.filter((arrival) => arrival.path === '/hooks/doomed').length, 1);
        const view = await server.call('GET', `/v1/webhook-deliveries/${ofDoomed.id}`, { key });
        assert.match(view.body.attempts[0].error, /timeout/);
        assert.match(view.body.attempts[1].error, /endpoint was deleted/);
        const reenabled = rows.find((row) => row.endpoint_id === disabled.id);
        assert.equal(reenabled?.status, 'succeeded', 're-enabled: the next event reaches it');
      });

      it('recovers the failed deliveries of the project since a time', async () => {
        receiver.respond = () => ({ status: 503 });
        const { projectId, key } = await project();
        const other = await project();
        await setCallbackUrl(server.app, projectId, `${receiver.url}/down`);
        await setCallbackUrl(server.app, other.projectId, `${receiver.url}/down`);
        const started = new Date(Date.now() - 1000).toISOString();
        const message = await insertMessage(server.app, projectId);
        const otherMessage = await insertMessage(server.app, other.projectId);
        await emitStatus(server.app, message, 'SENT');
        await emitStatus(server.app, message, 'DELIVERED');
        await emitStatus(server.app, otherMessage, 'SENT');
        await settled(projectId, 2);
        await settled(other.projectId, 1);

        receiver.respond = ok;
        const later = await server.call('POST', '/v1/webhook-deliveries/recover', {
          key,
          body: { since: new Date(Date.now() + 60_000).toISOString() },
        });
        assert.deepEqual([later.status, later.body], [202, { requeued: 0 }], 'nothing failed after a future time');
        const reply = await server.call('POST', '/v1/webhook-deliveries/recover', { key, body: { since: started } });
        assert.equal(reply.status, 202, reply.text);
        assert.deepEqual(reply.body, { requeued: 2 });
        const rows = await settled(projectId, 2);
        assert.ok(rows.every((row) => row.status === 'succeeded'));
        assert.equal(rows[0]!.attempt_count, 3);
        const others = await deliveryRows(server.app, other.projectId);
        assert.equal(others[0]!.status, 'failed', 'another project’s deliveries are left alone');
      });
    });

    describe('errors', () => {
      it('refuses unknown events (422), bad URLs and bad bodies (400)', async () => {
        const { key } = await project();
        const unknown = await server.call('POST', '/v1/webhook-endpoints', {
          key,
          body: { url: receiver.url, events: ['message.sent', 'message.exploded'] },
        });
        assert.equal(unknown.status, 422);
        assert.equal(unknown.body.code, 'webhook_event_unknown');
        assert.equal(unknown.body.errors[0].field, '/events/1');
        assert.match(unknown.headers.get('content-type') ?? '', /application\/problem\+json/);

        for (const url of ['ftp://example.com/x', 'https://user:pw@example.com/', 'https://example.com/#frag', 'not a url']) {
          const reply = await server.call('POST', '/v1/webhook-endpoints', { key, body: { url } });
          assert.equal(reply.status, 400, url);
          assert.equal(reply.body.code, 'validation_failed');
          assert.equal(reply.body.errors[0].field, '/url');
          assert.match(reply.body.errors[0].message, /^url /);
        }
        for (const body of [{}, { url: receiver.url, events: [] }, { url: receiver.url, enabled: 'yes' }, { url: receiver.url, extra: 1 }]) {
          const reply = await server.call('POST', '/v1/webhook-endpoints', { key, body });
          assert.equal(reply.status, 400, JSON.stringify(body));
        }
        const endpoint = await createEndpoint(key, { url: receiver.url });
        const empty = await server.call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { key, body: {} });
        assert.equal(empty.status, 400);
        const badPatch = await server.call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, {
          key,
          body: { events: ['nope'] },
        });
        assert.equal(badPatch.status, 422);

        await server.call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { key, body: { enabled: false } });
        const test = await server.call('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
        assert.equal(test.status, 409);
        assert.equal(test.body.code, 'webhook_endpoint_disabled');

        const old = await server.call('POST', '/v1/webhook-deliveries/recover', {
          key,
          body: { since: new Date(Date.now() - 8 * 86_400_000).toISOString() },
        });
        assert.equal(old.status, 422);
        assert.equal(old.body.code, 'invalid_time_range');
        const notADate = await server.call('POST', '/v1/webhook-deliveries/recover', { key, body: { since: 'yesterday' } });
        assert.equal(notADate.status, 400);
      });

      it('caps the endpoints of a project', async () => {
        const { key } = await project();
        for (let i = 0; i < 20; i++) await createEndpoint(key, { url: `${receiver.url}/${i}` });
        const reply = await server.call('POST', '/v1/webhook-endpoints', { key, body: { url: receiver.url } });
        assert.equal(reply.status, 409);
        assert.equal(reply.body.code, 'webhook_endpoint_limit_reached');
      });
    });

    describe('security', () => {
      it('keeps each project’s endpoints to itself', async () => {
        const owner = await project();
        const intruder = await project();
        const endpoint = await createEndpoint(owner.key, { url: receiver.url });
        const { key } = intruder;
        for (const [method, path, body] of [
          ['GET', `/v1/webhook-endpoints/${endpoint.id}`, undefined],
          ['PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { enabled: false }],
          ['DELETE', `/v1/webhook-endpoints/${endpoint.id}`, undefined],
          ['POST', `/v1/webhook-endpoints/${endpoint.id}/test`, undefined],
        ] as const) {
          const reply = await server.call(method, path, { key, ...(body && { body }) });
          assert.equal(reply.status, 404, `${method} ${path}`);
          assert.equal(reply.body.code, 'not_found');
        }
        assert.deepEqual((await server.call('GET', '/v1/webhook-endpoints', { key })).body, []);
        const still = await server.call('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: owner.key });
        assert.equal(still.body.enabled, true);
        for (const id of ['we_x', "we_' or 1=1 --", 'x'.repeat(300)]) {
          const reply = await server.call('GET', `/v1/webhook-endpoints/${encodeURIComponent(id)}`, { key: owner.key });
          assert.ok([400, 404].includes(reply.status), id);
        }
      });

      it('refuses requests without a key or with a revoked one', async () => {
        const { key } = await project();
        const second = await server.call('POST', '/v1/api-keys', { key, body: { name: 'second' } });
        assert.equal((await server.call('GET', '/v1/webhook-endpoints')).status, 401);
        assert.equal((await server.call('DELETE', `/v1/api-keys/${second.body.id}`, { key })).status, 200);
        const revoked = await server.call('POST', '/v1/webhook-endpoints', { key: second.body.key, body: { url: receiver.url } });
        assert.equal(revoked.status, 401);
      });
    });
  });

  describe(`webhook endpoint URLs without development mode (${kind})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind, { env: { SVC_ALLOW_PRIVATE_CALLBACKS: 'false' } });
    });
    after(async () => server.close());

    it('refuses http and private, loopback, link-local and metadata addresses', async () => {
      const { key } = await server.createProject();
      for (const url of [
        'http://hooks.example.com/x',
        'https://127.0.0.1/x',
        'https://10.1.2.3/x',
        'https://169.254.169.254/latest',
        'https://[::1]/x',
        'https://0x7f.1/x',
        'https://localhost/x',
      ]) {
        const reply = await server.call('POST', '/v1/webhook-endpoints', { key, body: { url } });
        assert.equal(reply.status, 400, url);
        assert.ok(['https_required', 'forbidden_address'].includes(reply.body.errors[0].code), url);
      }
      const fine = await server.call('POST', '/v1/webhook-endpoints', { key, body: { url: 'https://93.184.215.14/hooks' } });
      assert.equal(fine.status, 201, fine.text);
      const patched = await server.call('PATCH', `/v1/webhook-endpoints/${fine.body.id}`, {
        key,
        body: { url: 'https://192.168.0.1/x' },
      });
      assert.equal(patched.status, 400);
    });
  });
}
