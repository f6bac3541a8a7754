import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createSvcClient, signWebhook, unwrap, verifyWebhook, WebhookVerificationError } from '../src/index.ts';
import { databaseKinds } from '../../test/support/databases.ts';
import { sendBody, senderAt } from '../../test/support/sending.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhookReceiver.ts';

const SECRET = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
const OTHER = 'whsec_' + Buffer.alloc(32, 8).toString('base64');

async function signed(payload: string, options: { secret?: string; timestamp?: number; id?: string } = {}) {
  const id = options.id ?? 'msg_1';
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signature = await signWebhook({ secret: options.secret ?? SECRET, id, timestamp, payload });
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

const rejects = (promise: Promise<unknown>, message: RegExp) =>
  assert.rejects(promise, (error: unknown) => error instanceof WebhookVerificationError && message.test(error.message));

describe('webhook signatures (Standard Webhooks)', () => {
  const payload = JSON.stringify({ event: 'message.sent', message_id: 'msg_1', status: 'SENT' });

  test('signWebhook agrees with the standardwebhooks library, both ways', async () => {
    const headers = await signed(payload);
    assert.deepEqual(new Webhook(SECRET).verify(payload, headers), JSON.parse(payload));
    const timestamp = new Date();
    const theirs = new Webhook(SECRET).sign('msg_2', timestamp, payload);
    const event = await verifyWebhook({
      payload,
      secret: SECRET,
      headers: { 'webhook-id': 'msg_2', 'webhook-timestamp': String(Math.floor(+timestamp / 1000)), 'webhook-signature': theirs },
    });
    assert.deepEqual(event, JSON.parse(payload));
  });

  test('accepts bytes, Headers objects, node header arrays, and any matching entry or secret', async () => {
    const headers = await signed(payload);
    const bytes = new TextEncoder().encode(payload);
    assert.ok(await verifyWebhook({ payload: bytes, headers: new Headers(headers), secret: SECRET }));
    const two = { ...headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} ${headers['webhook-signature']}` };
    assert.ok(await verifyWebhook({ payload, headers: two, secret: SECRET }));
    assert.ok(await verifyWebhook({ payload, headers, secret: [OTHER, SECRET] }));
    const upper = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), [value]]));
    assert.ok(await verifyWebhook({ payload, headers: upper, secret: SECRET }));
  });

  test('refuses a changed body, another secret, an old or future timestamp, missing headers, other versions', async () => {
    const headers = await signed(payload);
    await rejects(verifyWebhook({ payload: payload + ' ', headers, secret: SECRET }), /No webhook-signature matches/);
    await rejects(verifyWebhook({ payload, headers, secret: OTHER }), /No webhook-signature matches/);
    await rejects(verifyWebhook({ payload, headers: { ...headers, 'webhook-id': 'msg_2' }, secret: SECRET }), /matches/);
    const old = await signed(payload, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    await rejects(verifyWebhook({ payload, headers: old, secret: SECRET }), /too far/);
    const future = await signed(payload, { timestamp: Math.floor(Date.now() / 1000) + 301 });
    await rejects(verifyWebhook({ payload, headers: future, secret: SECRET }), /too far/);
    assert.ok(await verifyWebhook({ payload, headers: old, secret: SECRET, toleranceSeconds: 600 }));
    await rejects(verifyWebhook({ payload, headers: { ...headers, 'webhook-signature': undefined }, secret: SECRET }), /Missing/);
    await rejects(verifyWebhook({ payload, headers: { ...headers, 'webhook-timestamp': '1e9' }, secret: SECRET }), /not a number/);
    const v2 = { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') };
    await rejects(verifyWebhook({ payload, headers: v2, secret: SECRET }), /matches/);
    await rejects(verifyWebhook({ payload, headers: { ...headers, 'webhook-signature': 'v1,!!!' }, secret: SECRET }), /matches/);
  });
});

for (const kind of databaseKinds()) {
  describe(`webhooks svc signs (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    before(async () => {
      server = await startTestServer(kind, {
        env: { SVC_SANDBOX_DELIVERY_DELAY_MS: '10', SVC_SANDBOX_READ_DELAY_MS: '10' },
      });
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await receiver.close();
      await server.close();
    });

    test('verifyWebhook accepts what svc sends with the project’s secret, and nothing else', async () => {
      const sender = await senderAt(server.url);
      const svc = createSvcClient({ baseUrl: server.url, apiKey: sender.key });
      await unwrap(
        svc.PUT('/v1/projects/me/provider-credentials', { body: { callbackUrl: `${receiver.url}/hooks` } as never }),
      );
      const { secret } = await unwrap(svc.GET('/v1/projects/me/webhook-secret'));
      const message = await unwrap(svc.POST('/v1/messages', { body: sendBody(sender) }));
      await receiver.waitFor((arrivals) => arrivals.some((arrival) => arrival.body.includes('message.read')));
      const mine = receiver.arrivals.filter((arrival) => arrival.body.includes(message.id));
      assert.ok(mine.length >= 3);
      for (const arrival of mine) {
        const event = await verifyWebhook({ payload: arrival.body, headers: arrival.headers, secret });
        assert.equal(event.event, arrival.headers['x-service-event']);
        if (event.event.startsWith('message.')) assert.equal((event as { message_id: string }).message_id, message.id);
        await rejects(verifyWebhook({ payload: arrival.body.replace('"to":"+', '"to":"+1'), headers: arrival.headers, secret }), /matches/);
        await rejects(verifyWebhook({ payload: arrival.body, headers: arrival.headers, secret: OTHER }), /matches/);
      }
    });
  });
}
