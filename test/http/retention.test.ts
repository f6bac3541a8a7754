import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { databaseKinds } from '../support/databases.ts';
import { call } from '../support/http.ts';
import { createSender, type Sender, sendBody, waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';
import { purgeNow, totalPurged } from '../../src/workers/retention.ts';
import { storedMessageId } from '../../src/db/deliveryIds.ts';

// Issue 19, requirement 3: data past its retention is purged; a purged message is 404 everywhere
// and its counts stay in analytics. The purge runs here at an injected time (an hour on), not by
// waiting: the worker's own runs (at the real time) purge nothing younger than an hour.

const HOUR = 3_600_000;
const ENV = {
  SVC_SANDBOX_DELIVERY_DELAY_MS: '20',
  SVC_SANDBOX_READ_DELAY_MS: '20',
  SVC_WEBHOOK_RETRY_SCHEDULE: '50ms',
  SVC_RETENTION_MESSAGES: '1h',
  SVC_RETENTION_WEBHOOK_DELIVERIES: '1h',
};

for (const kind of databaseKinds()) {
  describe(`data retention (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;

    before(async () => {
      server = await startTestServer(kind, { env: ENV });
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    const purgeAt = (now: number) => purgeNow(server.app.database, server.app.config.retention, now);

    async function sender(): Promise<Sender> {
      const created = await createSender(server);
      const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', { key: created.key, body: { callbackUrl: receiver.url } });
      assert.equal(saved.status, 200, saved.text);
      return created;
    }

    /** A message sent, READ, and its three webhooks delivered. */
    async function finishedMessage(from: Sender): Promise<string> {
      const sent = await server.call('POST', '/v1/messages', { key: from.key, body: sendBody(from) });
      assert.equal(sent.status, 202, sent.text);
      await waitForStatus(server, from.key, sent.body.id, 'READ');
      await until('three webhooks delivered', async () => {
        const log = await server.call('GET', `/v1/webhook-deliveries?messageId=${sent.body.id}`, { key: from.key });
        return log.body.length === 3 && log.body.every((delivery: { status: string }) => delivery.status === 'succeeded');
      });
      return sent.body.id;
    }

    /** A time after everything written so far, and before anything written next. */
    async function now(): Promise<number> {
      const at = Date.now() + 1;
      await until('the clock to move past it', () => Date.now() > at + 1);
      return at;
    }

    async function analytics(from: Sender): Promise<Record<string, number>> {
      const day = 86_400_000;
      const start = new Date(Date.now() - (Date.now() % day) - day).toISOString();
      const end = new Date(Date.now() - (Date.now() % day) + 2 * day).toISOString();
      const reply = await server.call('GET', `/v1/analytics/messages?from=${start}&to=${end}&interval=day`, { key: from.key });
      assert.equal(reply.status, 200, reply.text);
      const totals: Record<string, number> = {};
      for (const bucket of reply.body.buckets) {
        for (const [status, n] of Object.entries(bucket.counts as Record<string, number>)) totals[status] = (totals[status] ?? 0) + n;
      }
      return totals;
    }

    it('a message past retention is 404 everywhere, its deliveries gone, its counts kept; young and queued ones stay', async () => {
      const project = await sender();
      const old = await finishedMessage(project);
      const scheduled = await server.call('POST', '/v1/messages', {
        key: project.key,
        body: { ...sendBody(project, '+5511987654322'), sendAt: new Date(Date.now() + 86_400_000).toISOString() },
      });
      assert.equal(scheduled.status, 202, scheduled.text);
      const cutoff = await now();
      const young = await finishedMessage(project);
      const counted = await analytics(project);
      assert.equal(counted.READ, 2);

      const { steps } = await purgeAt(cutoff + HOUR);
      assert.ok((totalPurged(steps).messages ?? 0) >= 1);

      assert.equal((await server.call('GET', `/v1/messages/${old}`, { key: project.key })).status, 404);
      assert.equal((await server.call('GET', `/v1/messages/${old}/events`, { key: project.key })).status, 404);
      const list = await server.call('GET', '/v1/messages', { key: project.key });
      assert.deepEqual(
        list.body.map((message: { id: string }) => message.id).sort(),
        [young, scheduled.body.id].sort(),
      );
      assert.deepEqual((await server.call('GET', `/v1/webhook-deliveries?messageId=${old}`, { key: project.key })).body, []);
      const log = await server.call('GET', '/v1/webhook-deliveries', { key: project.key });
      assert.ok(log.body.every((delivery: { messageId?: string }) => delivery.messageId !== old));
      const feed = await server.call('GET', '/v1/events', { key: project.key });
      assert.ok(feed.body.length > 0);
      assert.ok(feed.body.every((event: { payload: unknown }) => !JSON.stringify(event.payload).includes(old)));
      const rows = await server.app.database.db.selectFrom('webhook_deliveries').select('id').where('message_id', '=', storedMessageId(server.app.database.db, old) as string).execute();
      assert.equal(rows.length, 0);

      assert.equal((await server.call('GET', `/v1/messages/${young}`, { key: project.key })).body.status, 'READ');
      assert.equal((await server.call('GET', `/v1/messages/${young}/events`, { key: project.key })).status, 200);
      assert.equal((await server.call('GET', `/v1/messages/${scheduled.body.id}`, { key: project.key })).body.status, 'QUEUED');
      assert.deepEqual(await analytics(project), counted, 'analytics still count the purged message');
    });

    it('a project’s shorter retention applies to its data only', async () => {
      const short = await sender();
      const other = await sender();
      const set = await server.call('PUT', '/v1/projects/me/retention', { key: short.key, body: { messages: '30m' } });
      assert.equal(set.status, 200, set.text);
      const shortMessage = await finishedMessage(short);
      const otherMessage = await finishedMessage(other);
      const cutoff = await now();

      await purgeAt(cutoff + 45 * 60_000); // past 30 minutes, within the hour

      assert.equal((await server.call('GET', `/v1/messages/${shortMessage}`, { key: short.key })).status, 404);
      assert.equal((await server.call('GET', `/v1/messages/${otherMessage}`, { key: other.key })).status, 200);
      assert.equal((await server.call('GET', `/v1/webhook-deliveries?messageId=${otherMessage}`, { key: other.key })).body.length, 3);
    });

    it('the worker purges on its own: with a 2-second retention the message soon answers 404, counted in metrics', async () => {
      const lines: string[] = [];
      const short = await startTestServer(kind, {
        env: { ...ENV, SVC_RETENTION_MESSAGES: '2s', SVC_RETENTION_WEBHOOK_DELIVERIES: '2s', SVC_RETENTION_INTERVAL: '1s' },
        logger: pino({ level: 'info' }, { write: (line: string) => lines.push(line) }),
      });
      try {
        const from = await createSender(short);
        const sent = await short.call('POST', '/v1/messages', { key: from.key, body: sendBody(from) });
        assert.equal(sent.status, 202, sent.text);
        await until('the message purged', async () => (await short.call('GET', `/v1/messages/${sent.body.id}`, { key: from.key })).status === 404);
        assert.equal((await short.call('GET', `/v1/messages/${sent.body.id}/events`, { key: from.key })).status, 404);
        const metrics = await call(short.app.opsUrl!, 'GET', '/metrics');
        assert.match(metrics.text, /svc_retention_purged_rows_total\{kind="messages"\} [1-9]/);
        assert.match(metrics.text, /svc_retention_purged_rows_total\{kind="message_events"\} [1-9]/);
        // The run that removed it logs one line when it ends.
        await until('a run’s log line', () =>
          lines.map((line) => JSON.parse(line)).some((line) => line.msg === 'retention purge run' && line.purged.messages >= 1),
        );
      } finally {
        await short.close();
      }
    });

    describe('GET/PUT /v1/projects/me/retention', () => {
      it('shows the operator’s retention, takes a shorter one, and returns to the operator’s with null', async () => {
        const { key } = await server.createProject();
        const shown = await server.call('GET', '/v1/projects/me/retention', { key });
        assert.equal(shown.status, 200, shown.text);
        assert.deepEqual(shown.body, {
          messages: { retention: '1h', projectSetting: null, maximum: '1h' },
          webhookDeliveries: { retention: '1h', projectSetting: null, maximum: '1h' },
        });
        const shorter = await server.call('PUT', '/v1/projects/me/retention', { key, body: { messages: '30m' } });
        assert.equal(shorter.status, 200, shorter.text);
        // Deliveries go with their message: never kept longer than it.
        assert.deepEqual(shorter.body, {
          messages: { retention: '30m', projectSetting: '30m', maximum: '1h' },
          webhookDeliveries: { retention: '30m', projectSetting: null, maximum: '1h' },
        });
        const both = await server.call('PUT', '/v1/projects/me/retention', { key, body: { webhookDeliveries: '90s' } });
        assert.equal(both.body.messages.projectSetting, '30m', 'a field left out is unchanged');
        assert.equal(both.body.webhookDeliveries.retention, '90s');
        assert.deepEqual((await server.call('GET', '/v1/projects/me/retention', { key })).body, both.body);
        const reset = await server.call('PUT', '/v1/projects/me/retention', { key, body: { messages: null, webhookDeliveries: null } });
        assert.deepEqual(reset.body, shown.body);
      });

      it('refuses more than the operator’s maximum, and what is not a duration (400 validation_failed)', async () => {
        const { key } = await server.createProject();
        for (const [body, field, code] of [
          [{ messages: '2h' }, '/messages', 'above_maximum'],
          [{ webhookDeliveries: '61m' }, '/webhookDeliveries', 'above_maximum'],
          [{ messages: 'soon' }, '/messages', 'invalid_duration'],
          [{ messages: '500ms' }, '/messages', 'too_short'],
          [{ messages: '-1h' }, '/messages', 'invalid_duration'],
        ] as const) {
          const reply = await server.call('PUT', '/v1/projects/me/retention', { key, body });
          assert.equal(reply.status, 400, JSON.stringify(body));
          assert.equal(reply.body.code, 'validation_failed');
          assert.deepEqual(
            reply.body.errors.map((error: { field: string; code: string }) => [error.field, error.code]),
            [[field, code]],
          );
        }
        for (const body of [{ messages: 3600 }, { messages: '1'.repeat(40) + 's' }, { retention: '1h' }, ['1h']]) {
          const reply = await server.call('PUT', '/v1/projects/me/retention', { key, body });
          assert.equal(reply.status, 400, JSON.stringify(body));
          assert.equal(reply.body.code, 'validation_failed');
        }
        assert.equal((await server.call('GET', '/v1/projects/me/retention', { key })).body.messages.projectSetting, null, 'nothing was stored');
      });

      it('is the calling project’s only; a revoked or missing key is 401', async () => {
        const mine = await server.createProject();
        const theirs = await server.createProject();
        await server.call('PUT', '/v1/projects/me/retention', { key: mine.key, body: { messages: '10m' } });
        assert.equal((await server.call('GET', '/v1/projects/me/retention', { key: theirs.key })).body.messages.projectSetting, null);
        assert.equal((await server.call('GET', '/v1/projects/me/retention')).status, 401);
        assert.equal((await server.call('PUT', '/v1/projects/me/retention', { body: { messages: '10m' } })).status, 401);
        const second = await server.call('POST', '/v1/api-keys', { key: mine.key, body: { name: 'ci' } });
        assert.equal(second.status, 200, second.text);
        assert.equal((await server.call('DELETE', `/v1/api-keys/${mine.keyId}`, { key: second.body.apiKey })).status, 200);
        assert.equal((await server.call('PUT', '/v1/projects/me/retention', { key: mine.key, body: { messages: '5m' } })).status, 401);
        assert.equal((await server.call('GET', '/v1/projects/me/retention', { key: mine.key })).status, 401);
      });
    });
  });
}
