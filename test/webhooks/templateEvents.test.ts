import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { applyTemplateReview } from '../../src/workers/templateReview.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { deliveryRows, liveSecrets, setCallbackUrl, waitUntil } from '../support/webhookEvents.ts';
import { ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// Template status events reach the matching webhook endpoints like message events; never the
// spec's callbackUrl, whose receivers expect the spec's message payload only (CONTRACT §3).

function template(name: string) {
  return { name, language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hello {{1}}, thanks.' }] };
}

for (const kind of databaseKinds()) {
  describe(`template status events (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;

    before(async () => {
      // Reviews happen only through the test helper or the provider's reports.
      server = await startTestServer(kind, { env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' } });
      receiver = await startWebhookReceiver(ok);
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    it('delivers template.approved and template.rejected, signed, to matching endpoints and not to the callback', async () => {
      const { projectId, key } = await server.createProject();
      receiver.secrets = await liveSecrets(server.app, projectId);
      await setCallbackUrl(server.app, projectId, `${receiver.url}/callback`);
      const endpoint = await server.call('POST', '/v1/webhook-endpoints', {
        key,
        body: { url: `${receiver.url}/rejections`, events: ['template.rejected'] },
      });
      assert.equal(endpoint.status, 201);
      const everything = await server.call('POST', '/v1/webhook-endpoints', { key, body: { url: `${receiver.url}/all` } });
      assert.equal(everything.status, 201);

      const good = await server.call('POST', '/v1/templates', { key, body: template('welcome') });
      const bad = await server.call('POST', '/v1/templates', { key, body: template('spammy') });
      const approve = await server.call('POST', `/v1/test-helpers/templates/${good.body.id}/review`, {
        key,
        body: { status: 'APPROVED' },
      });
      assert.equal(approve.status, 200, approve.text);
      await server.call('POST', `/v1/test-helpers/templates/${bad.body.id}/review`, {
        key,
        body: { status: 'REJECTED', reason: 'Looks like spam.' },
      });

      await waitUntil(async () => {
        const rows = await deliveryRows(server.app, projectId);
        return rows.length === 3 && rows.every((row) => row.status === 'succeeded');
      });
      const rows = await deliveryRows(server.app, projectId);
      assert.deepEqual(
        rows.map((row) => `${row.event} ${row.endpoint_id === null ? 'callback' : row.endpoint_id === endpoint.body.id ? 'rejections' : 'all'}`).sort(),
        ['template.approved all', 'template.rejected all', 'template.rejected rejections'],
      );
      for (const row of rows) {
        assert.equal(row.message_id, null);
        assert.equal(row.template_id, row.event === 'template.approved' ? good.body.id : bad.body.id);
      }

      const arrivals = receiver.arrivals.filter((arrival) => rows.some((row) => row.id === arrival.deliveryId));
      assert.equal(arrivals.length, 3);
      for (const arrival of arrivals) {
        assert.deepEqual(arrival.verified, [true]);
        assert.equal(arrival.headers['user-agent'], 'Service/1.0');
        assert.equal(arrival.headers['x-service-event'], JSON.parse(arrival.body).event);
        assert.ok(arrival.headers['webhook-id'] && arrival.headers['webhook-timestamp']);
      }
      const rejected = JSON.parse(arrivals.find((arrival) => arrival.path === '/hooks/rejections')!.body);
      assert.deepEqual(Object.keys(rejected), ['event', 'event_id', 'occurred_at', 'template']);
      assert.equal(rejected.event, 'template.rejected');
      assert.match(rejected.event_id, /^tse_/);
      assert.match(rejected.occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(
        { ...rejected.template, providerStatus: undefined },
        { id: bad.body.id, name: 'spammy', language: 'en_US', status: 'REJECTED', rejectionReason: 'Looks like spam.', providerStatus: undefined },
      );
      const approved = JSON.parse(arrivals.find((arrival) => arrival.headers['x-service-event'] === 'template.approved')!.body);
      assert.equal(approved.template.status, 'APPROVED');
      assert.ok(!('rejectionReason' in approved.template));

      const view = await server.call('GET', '/v1/webhook-deliveries?event=template.rejected', { key });
      assert.equal(view.status, 200);
      assert.equal(view.body.length, 2);
      for (const delivery of view.body) {
        assert.equal(delivery.messageId, null);
        assert.equal(delivery.templateId, bad.body.id);
      }
    });

    it('delivers the provider’s later statuses of a template (paused, reinstated), once each', async () => {
      const { projectId, key } = await server.createProject();
      await setCallbackUrl(server.app, projectId, `${receiver.url}/callback`);
      assert.equal((await server.call('POST', '/v1/webhook-endpoints', { key, body: { url: `${receiver.url}/all` } })).status, 201);
      const created = await server.call('POST', '/v1/templates', { key, body: template('alerts') });
      const templateId = created.body.id;
      const deps = { database: server.app.database, notifier: server.app.notifier, logger: server.app.logger };
      const report = (status: 'APPROVED' | 'REJECTED', providerStatus: string, at: number, reason?: string) =>
        applyTemplateReview(deps, {
          kind: 'template',
          templateId,
          status,
          providerStatus,
          occurredAt: at,
          ...(reason !== undefined && { reason }),
        });
      const start = Date.now() - 10_000;
      assert.equal(await report('APPROVED', 'APPROVED', start), 'applied');
      assert.equal(await report('APPROVED', 'PAUSED', start + 1000, 'Low quality.'), 'applied');
      assert.equal(await report('APPROVED', 'PAUSED', start + 1000, 'Low quality.'), 'unchanged', 'a duplicate');
      assert.equal(await report('APPROVED', 'APPROVED', start + 2000), 'applied');
      await waitUntil(async () => {
        const rows = await deliveryRows(server.app, projectId);
        return rows.length === 3 && rows.every((row) => row.status === 'succeeded');
      });
      const bodies = (await deliveryRows(server.app, projectId)).map((row) => JSON.parse(row.payload));
      assert.deepEqual(
        bodies.map((body) => body.event),
        ['template.approved', 'template.paused', 'template.approved'],
      );
      assert.deepEqual(bodies[1].template, {
        id: templateId,
        name: 'alerts',
        language: 'en_US',
        status: 'APPROVED',
        providerStatus: 'PAUSED',
        reason: 'Low quality.',
      });
    });

    it('sends nothing for a project with only a callback URL or with nothing, and nothing to other projects', async () => {
      const quiet = await server.createProject();
      const other = await server.createProject();
      await setCallbackUrl(server.app, other.projectId, `${receiver.url}/other`);
      const created = await server.call('POST', '/v1/templates', { key: quiet.key, body: template('quiet') });
      await server.call('POST', `/v1/test-helpers/templates/${created.body.id}/review`, {
        key: quiet.key,
        body: { status: 'APPROVED' },
      });
      assert.deepEqual(await deliveryRows(server.app, quiet.projectId), []);
      assert.deepEqual(await deliveryRows(server.app, other.projectId), []);
      // A callback URL alone gets no template event: the spec's receivers know message events only.
      const own = await server.call('POST', '/v1/templates', { key: other.key, body: template('its_own') });
      await server.call('POST', `/v1/test-helpers/templates/${own.body.id}/review`, { key: other.key, body: { status: 'REJECTED', reason: 'No.' } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(await deliveryRows(server.app, other.projectId), []);
    });
  });
}
