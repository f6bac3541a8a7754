import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { createSender, type Sender, sendBody, waitForStatus } from '../support/sending.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

const FAST = {
  SVC_SANDBOX_DELIVERY_DELAY_MS: '30',
  SVC_SANDBOX_READ_DELAY_MS: '30',
  SVC_SANDBOX_REVIEW_DELAY_MS: '3600000',
};
const DAY_MS = 86_400_000;

async function submissionsOf(server: TestServer, messageId: string): Promise<number> {
  const rows = await server.app.database.db
    .selectFrom('sandbox_submissions')
    .select('id')
    .where('message_id', '=', messageId)
    .execute();
  return rows.length;
}

/**
 * Runs checks that only hold before `sendAt` — and only when they start before it: on a machine
 * slow enough to reach `sendAt` first, the later `sentAt >= sendAt` assertions still prove the
 * message waited for its time.
 */
async function beforeItsTime(sendAt: string, checks: () => Promise<void>): Promise<void> {
  if (Date.now() < Date.parse(sendAt) - 500) await checks();
}

for (const kind of databaseKinds()) {
  describe(`scheduled sends and cancel (${kind})`, () => {
    let server: TestServer;
    let sender: Sender;
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await startWebhookReceiver();
      server = await startTestServer(kind, { env: FAST });
      sender = await createSender(server);
      const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', {
        key: sender.key,
        body: { callbackUrl: receiver.url },
      });
      assert.equal(saved.status, 200, saved.text);
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    it('a sendAt keeps the message QUEUED with scheduledFor until then, and sends it then', async () => {
      const sendAt = new Date(Date.now() + 3000).toISOString();
      const reply = await server.call('POST', '/v1/messages', { key: sender.key, body: { ...sendBody(sender), sendAt } });
      assert.equal(reply.status, 202, reply.text);
      assert.equal(reply.body.status, 'QUEUED');
      assert.equal(reply.body.scheduledFor, sendAt);
      assert.equal(reply.body.canceledAt, null);
      assert.equal(reply.body.batchId, null);
      await new Promise((resolve) => setTimeout(resolve, 700));
      await beforeItsTime(sendAt, async () => {
        assert.equal((await server.call('GET', `/v1/messages/${reply.body.id}`, { key: sender.key })).body.status, 'QUEUED');
        assert.equal(await submissionsOf(server, reply.body.id), 0, 'not submitted before its time');
      });
      const sent = await waitForStatus(server, sender.key, reply.body.id, 'READ');
      assert.ok(Date.parse(sent.sentAt) >= Date.parse(sendAt), `sent at ${sent.sentAt}, scheduled for ${sendAt}`);
      assert.equal(sent.scheduledFor, sendAt);
    });

    it('a sendAt in the past or more than 35 days ahead is 422 send_at_out_of_range; a second of slack is now', async () => {
      for (const sendAt of [new Date(Date.now() - 60_000).toISOString(), new Date(Date.now() + 36 * DAY_MS).toISOString()]) {
        const reply = await server.call('POST', '/v1/messages', { key: sender.key, body: { ...sendBody(sender), sendAt } });
        assert.equal(reply.status, 422, reply.text);
        assert.equal(reply.body.code, 'send_at_out_of_range');
        assert.equal(reply.body.errors[0].field, '/sendAt');
      }
      const justNow = await server.call('POST', '/v1/messages', {
        key: sender.key,
        body: { ...sendBody(sender), sendAt: new Date(Date.now() - 300).toISOString() },
      });
      assert.equal(justNow.status, 202, justNow.text);
      assert.equal(justNow.body.scheduledFor, null);
      const notADate = await server.call('POST', '/v1/messages', { key: sender.key, body: { ...sendBody(sender), sendAt: 'tomorrow' } });
      assert.equal(notADate.status, 400);
      assert.equal(notADate.body.code, 'validation_failed');
    });

    it('cancel: a scheduled message becomes CANCELED with its event and webhook, and is never sent', async () => {
      const sendAt = new Date(Date.now() + 3000).toISOString();
      const sent = await server.call('POST', '/v1/messages', { key: sender.key, body: { ...sendBody(sender), sendAt } });
      const id = sent.body.id;
      const canceled = await server.call('POST', `/v1/messages/${id}/cancel`, { key: sender.key });
      assert.equal(canceled.status, 200, canceled.text);
      assert.equal(canceled.body.status, 'CANCELED');
      assert.match(canceled.body.canceledAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(canceled.body.scheduledFor, sendAt);

      const again = await server.call('POST', `/v1/messages/${id}/cancel`, { key: sender.key });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, canceled.body, 'canceling again changes nothing');

      await receiver.waitFor((arrivals) => arrivals.some((arrival) => arrival.body.includes(id)));
      const webhook = receiver.arrivals.find((arrival) => arrival.body.includes(id))!;
      const payload = JSON.parse(webhook.body);
      assert.equal(payload.event, 'message.canceled');
      assert.equal(payload.status, 'CANCELED');
      assert.equal(payload.message_id, id);
      assert.equal(webhook.headers['x-service-event'], 'message.canceled');

      const events = await server.call('GET', `/v1/messages/${id}/events`, { key: sender.key });
      assert.deepEqual(
        events.body.map((event: any) => [event.status, event.event]),
        [
          ['QUEUED', null],
          ['CANCELED', 'message.canceled'],
        ],
      );
      // Past its time, with a margin for the dispatcher to have acted had it been due.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(sendAt) + 1000 - Date.now())));
      assert.equal(await submissionsOf(server, id), 0);
      assert.equal((await server.call('GET', `/v1/messages/${id}`, { key: sender.key })).body.status, 'CANCELED');
      const listed = await server.call('GET', '/v1/messages?status=CANCELED', { key: sender.key });
      assert.ok(listed.body.some((message: any) => message.id === id));
    });

    it('cancel: a message already sent is 409 message_not_cancelable; another project’s or an unknown id is 404', async () => {
      const sent = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
      await waitForStatus(server, sender.key, sent.body.id, 'READ');
      const refused = await server.call('POST', `/v1/messages/${sent.body.id}/cancel`, { key: sender.key });
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.code, 'message_not_cancelable');

      const other = await createSender(server, 'other_template');
      const foreign = await server.call('POST', `/v1/messages/${sent.body.id}/cancel`, { key: other.key });
      assert.equal(foreign.status, 404);
      assert.equal((await server.call('POST', '/v1/messages/msg_nope/cancel', { key: sender.key })).status, 404);
      assert.equal((await server.call('POST', `/v1/messages/${sent.body.id}/cancel`, {})).status, 401);
    });

    it('a scheduled message survives a restart and is sent at its time, not before', async () => {
      const database = await createTestDatabase(kind);
      const first = await startTestServer(kind, { env: FAST, database });
      const own = await createSender(first);
      const sendAt = new Date(Date.now() + 4000).toISOString();
      const accepted = await first.call('POST', '/v1/messages', { key: own.key, body: { ...sendBody(own), sendAt } });
      assert.equal(accepted.status, 202, accepted.text);
      await first.close();
      const second = await startTestServer(kind, { env: FAST, database });
      try {
        await beforeItsTime(sendAt, async () => assert.equal(await submissionsOf(second, accepted.body.id), 0));
        const sent = await waitForStatus(second, own.key, accepted.body.id, 'READ');
        assert.ok(Date.parse(sent.sentAt) >= Date.parse(sendAt), `sent at ${sent.sentAt}, scheduled for ${sendAt}`);
        await until('one submission', async () => (await submissionsOf(second, accepted.body.id)) === 1);
      } finally {
        await second.close();
        await database.drop();
      }
    });
  });
}
