import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { createSender, sendBody, type Sender, waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitUntil } from '../support/webhookEvents.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// From POST /v1/messages to the customer's receiver: the sandbox walks the message through its
// statuses, and each change arrives as a signed webhook and shows under the message's events.

for (const kind of databaseKinds()) {
  describe(`webhooks end to end (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    let sender: Sender;

    before(async () => {
      server = await startTestServer(kind, {
        env: { SVC_SANDBOX_DELIVERY_DELAY_MS: '20', SVC_SANDBOX_READ_DELAY_MS: '20' },
      });
      receiver = await startWebhookReceiver();
      sender = await createSender(server);
      const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', {
        key: sender.key,
        body: { callbackUrl: receiver.url },
      });
      assert.equal(saved.status, 200, saved.text);
      const secret = await server.call('GET', '/v1/projects/me/webhook-secret', { key: sender.key });
      assert.equal(secret.status, 200, secret.text);
      receiver.secrets = [secret.body.secret];
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    function arrivalsOf(messageId: string) {
      return receiver.arrivals.filter((arrival) => JSON.parse(arrival.body).message_id === messageId);
    }

    it('sends message.sent, message.delivered and message.read, signed, and lists them under the events', async () => {
      const accepted = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
      assert.equal(accepted.status, 202, accepted.text);
      const message = await waitForStatus(server, sender.key, accepted.body.id, 'READ');
      await receiver.waitFor(() => arrivalsOf(message.id).length === 3);

      const payloads = arrivalsOf(message.id).map((arrival) => {
        assert.deepEqual(arrival.verified, [true]);
        assert.equal(arrival.headers['x-service-event'], JSON.parse(arrival.body).event);
        return JSON.parse(arrival.body);
      });
      assert.deepEqual(
        payloads.map((payload) => payload.event),
        ['message.sent', 'message.delivered', 'message.read'],
      );
      for (const payload of payloads) {
        assert.equal(payload.to, '+5511987654321');
        assert.equal(payload.template, sender.templateName);
        assert.equal(payload.provider_message_id, message.providerMessageId);
        assert.ok(!('error' in payload));
      }
      assert.equal(payloads[0].occurred_at, message.sentAt);
      assert.equal(payloads[2].occurred_at, message.readAt);

      // The receiver has answered; the attempts are recorded a moment later.
      let events = await server.call('GET', `/v1/messages/${message.id}/events`, { key: sender.key });
      await waitUntil(async () => {
        events = await server.call('GET', `/v1/messages/${message.id}/events`, { key: sender.key });
        return events.body.every((event: any) => event.deliveries.every((d: any) => d.status === 'succeeded'));
      });
      assert.equal(events.status, 200);
      const delivered = events.body.filter((event: any) => event.status !== 'QUEUED');
      assert.equal(delivered.length, 3);
      for (const event of delivered) {
        assert.equal(event.deliveries.length, 1);
        const [delivery] = event.deliveries;
        assert.equal(delivery.eventId, event.id);
        assert.equal(delivery.event, event.event);
        assert.equal(delivery.status, 'succeeded');
        assert.equal(delivery.attempts[0].statusCode, 200);
        assert.ok(receiver.arrivalsFor(delivery.id).length >= 1);
      }
    });

    it('sends message.failed with the provider error', async () => {
      const accepted = await server.call('POST', '/v1/messages', {
        key: sender.key,
        body: sendBody(sender, '+15550000001'),
      });
      assert.equal(accepted.status, 202, accepted.text);
      const message = await waitForStatus(server, sender.key, accepted.body.id, 'FAILED');
      await receiver.waitFor(() => arrivalsOf(message.id).some((arrival) => arrival.body.includes('message.failed')));
      const failed = arrivalsOf(message.id).map((arrival) => JSON.parse(arrival.body)).find((p) => p.event === 'message.failed');
      assert.equal(failed.status, 'FAILED');
      assert.equal(failed.error.code, '131026');
      assert.deepEqual(Object.keys(failed.error).sort(), ['code', 'message', 'title']);
    });
  });
}
