import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { addQuickReplies, suppressionRows } from '../support/replies.ts';
import { createSender, type Sender, sendBody, waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { deliveryRows, liveSecrets, setCallbackUrl, waitUntil } from '../support/webhookEvents.ts';
import { ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// Replies in the sandbox (CONTRACT §9): the reply test helper records a quick-reply tap or a text
// on the message, lists it in the message's events, and emits a signed message.replied to the
// webhook endpoints that take it, never to the callbackUrl. The status stays as it was.

const REPLY = (id: string) => `/v1/test-helpers/messages/${id}/reply`;

for (const kind of databaseKinds()) {
  describe(`sandbox replies (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;

    before(async () => {
      // Messages stay SENT unless a test moves them.
      server = await startTestServer(kind, { env: { SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000', SVC_SANDBOX_READ_DELAY_MS: '3600000' } });
      receiver = await startWebhookReceiver(ok);
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    async function sentMessage(sender: Sender, to = '+5511987654321'): Promise<string> {
      const sent = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, to) });
      assert.equal(sent.status, 202, sent.text);
      await waitForStatus(server, sender.key, sent.body.id, 'SENT');
      return sent.body.id;
    }

    async function senderWithButtons(): Promise<Sender & { templateId: string }> {
      const sender = await createSender(server);
      const [template] = (await server.call('GET', '/v1/templates', { key: sender.key })).body;
      await addQuickReplies(server, template.id, ['Yes, confirm', 'Reschedule', 'Stop promotions'], [
        { type: 'URL', text: 'Track', url: 'https://example.com/track' },
      ]);
      return { ...sender, templateId: template.id };
    }

    it('records a quick-reply tap and a text reply, lists them in the events, and keeps the status', async () => {
      const sender = await senderWithButtons();
      const id = await sentMessage(sender);

      const tap = await server.call('POST', REPLY(id), { key: sender.key, body: { buttonIndex: 1 } });
      assert.equal(tap.status, 200, tap.text);
      assert.match(tap.body.id, /^evt_/);
      assert.equal(tap.body.messageId, id);
      assert.equal(tap.body.event, 'message.replied');
      assert.deepEqual(tap.body.reply, { type: 'button', text: 'Reschedule', payload: 'Reschedule' });
      assert.equal(tap.body.optedOut, false);

      const text = await server.call('POST', REPLY(id), { key: sender.key, body: { text: 'Can it come on Friday?' } });
      assert.equal(text.status, 200, text.text);
      assert.deepEqual(text.body.reply, { type: 'text', text: 'Can it come on Friday?' });

      const message = await server.call('GET', `/v1/messages/${id}`, { key: sender.key });
      assert.equal(message.body.status, 'SENT', 'a reply changes no status');
      const events = await server.call('GET', `/v1/messages/${id}/events`, { key: sender.key });
      assert.equal(events.status, 200, events.text);
      assert.deepEqual(
        events.body.map((event: any) => [event.status, event.event]),
        [
          ['QUEUED', null],
          ['SENT', 'message.sent'],
          ['SENT', 'message.replied'],
          ['SENT', 'message.replied'],
        ],
      );
      const [first, second] = events.body.slice(2);
      assert.equal(first.id, tap.body.id);
      assert.deepEqual(first.reply, { type: 'button', text: 'Reschedule', payload: 'Reschedule' });
      assert.deepEqual(second.reply, { type: 'text', text: 'Can it come on Friday?' });
      assert.deepEqual(first.deliveries, [], 'no endpoint: nothing to deliver');

      // A later status still moves forward, and the replies stay where they happened.
      assert.equal((await server.call('POST', `/v1/test-helpers/messages/${id}/advance`, { key: sender.key, body: { status: 'READ' } })).status, 200);
      const later = await server.call('GET', `/v1/messages/${id}/events`, { key: sender.key });
      assert.deepEqual(
        later.body.map((event: any) => event.event),
        [null, 'message.sent', 'message.replied', 'message.replied', 'message.delivered', 'message.read'],
      );
    });

    it('delivers message.replied, signed, to the endpoints that take it and never to the callbackUrl', async () => {
      const sender = await senderWithButtons();
      receiver.secrets = await liveSecrets(server.app, sender.projectId);
      await setCallbackUrl(server.app, sender.projectId, `${receiver.url}/callback`);
      const replies = await server.call('POST', '/v1/webhook-endpoints', {
        key: sender.key,
        body: { url: `${receiver.url}/replies`, events: ['message.replied'] },
      });
      assert.equal(replies.status, 201, replies.text);
      const statuses = await server.call('POST', '/v1/webhook-endpoints', {
        key: sender.key,
        body: { url: `${receiver.url}/statuses`, events: ['message.sent', 'message.delivered'] },
      });
      assert.equal(statuses.status, 201, statuses.text);
      const everything = await server.call('POST', '/v1/webhook-endpoints', { key: sender.key, body: { url: `${receiver.url}/all` } });
      assert.equal(everything.status, 201, everything.text);

      const id = await sentMessage(sender, '+5511987650001');
      const tap = await server.call('POST', REPLY(id), { key: sender.key, body: { buttonIndex: 0 } });
      assert.equal(tap.status, 200, tap.text);

      await waitUntil(async () => {
        const rows = (await deliveryRows(server.app, sender.projectId)).filter((row) => row.event === 'message.replied');
        return rows.length === 2 && rows.every((row) => row.status === 'succeeded');
      });
      const rows = await deliveryRows(server.app, sender.projectId);
      const replied = rows.filter((row) => row.event === 'message.replied');
      assert.deepEqual(
        replied.map((row) => row.endpoint_id).sort(),
        [replies.body.id, everything.body.id].sort(),
        'the replies endpoint and the catch-all endpoint; not the statuses endpoint, not the callback',
      );
      assert.ok(rows.some((row) => row.event === 'message.sent' && row.endpoint_id === null), 'the callback still gets the statuses');
      assert.ok(!rows.some((row) => row.event === 'message.replied' && row.endpoint_id === null));

      const arrivals = receiver.arrivals.filter((arrival) => replied.some((row) => row.id === arrival.deliveryId));
      assert.equal(arrivals.length, 2);
      assert.ok(!receiver.arrivals.some((arrival) => arrival.path === '/hooks/callback' && arrival.headers['x-service-event'] === 'message.replied'));
      for (const arrival of arrivals) {
        assert.deepEqual(arrival.verified, [true]);
        assert.equal(arrival.headers['x-service-event'], 'message.replied');
        const body = JSON.parse(arrival.body);
        assert.deepEqual(Object.keys(body), ['event', 'event_id', 'message_id', 'to', 'template', 'reply', 'occurred_at']);
        assert.deepEqual(
          { ...body, occurred_at: undefined },
          {
            event: 'message.replied',
            event_id: tap.body.id,
            message_id: id,
            to: '+5511987650001',
            template: sender.templateName,
            reply: { type: 'button', text: 'Yes, confirm', payload: 'Yes, confirm' },
            occurred_at: undefined,
          },
        );
        assert.equal(body.occurred_at, tap.body.occurredAt);
      }

      // The project's event feed carries the reply, its payload the body the endpoints received.
      const feed = await server.call('GET', '/v1/events?limit=200', { key: sender.key });
      assert.equal(feed.status, 200, feed.text);
      const inFeed = feed.body.filter((event: any) => event.payload.message_id === id);
      assert.deepEqual(inFeed.map((event: any) => event.type), ['message.sent', 'message.replied']);
      assert.equal(inFeed[1].id, tap.body.id);
      assert.equal(JSON.stringify(inFeed[1].payload), arrivals[0]!.body);
      // Paging by `after` walks status events and replies in one order.
      const afterSent = await server.call('GET', `/v1/events?after=${inFeed[0].id}&limit=1`, { key: sender.key });
      assert.deepEqual(afterSent.body.map((event: any) => event.id), [tap.body.id]);

      // The events view shows the reply's deliveries; the delivery list filters by the event.
      const events = await server.call('GET', `/v1/messages/${id}/events`, { key: sender.key });
      const reply = events.body.find((event: any) => event.event === 'message.replied');
      assert.equal(reply.deliveries.length, 2);
      const listed = await server.call('GET', '/v1/webhook-deliveries?event=message.replied', { key: sender.key });
      assert.equal(listed.status, 200, listed.text);
      assert.equal(listed.body.length, 2);
      assert.ok(listed.body.every((delivery: any) => delivery.messageId === id && delivery.eventId === tap.body.id));
    });

    it('refuses a button that is not a quick reply, both or neither field, and hostile input', async () => {
      const sender = await senderWithButtons();
      const id = await sentMessage(sender);
      for (const body of [{ buttonIndex: 3 }, { buttonIndex: 7 }, { buttonIndex: 0, text: 'Yes' }, {}]) {
        const reply = await server.call('POST', REPLY(id), { key: sender.key, body });
        assert.equal(reply.status, 400, `${JSON.stringify(body)}: ${reply.text}`);
        assert.equal(reply.body.code, 'validation_failed');
        assert.equal(reply.body.errors[0].field, '/buttonIndex');
      }
      for (const body of [{ buttonIndex: -1 }, { buttonIndex: 1.5 }, { buttonIndex: '0' }, { text: '' }, { text: '   ' }, { text: 'x'.repeat(5000) }, { text: 'hi', extra: 1 }]) {
        const reply = await server.call('POST', REPLY(id), { key: sender.key, body });
        assert.equal(reply.status, 400, `${JSON.stringify(body).slice(0, 60)}: ${reply.text}`);
      }
      // A template without buttons has no button to tap.
      const plain = await createSender(server);
      const plainId = await sentMessage(plain);
      const none = await server.call('POST', REPLY(plainId), { key: plain.key, body: { buttonIndex: 0 } });
      assert.equal(none.status, 400, none.text);
      const events = await server.call('GET', `/v1/messages/${id}/events`, { key: sender.key });
      assert.ok(!events.body.some((event: any) => event.event === 'message.replied'), 'nothing recorded');
    });

    it('answers 404 for an unknown message or another project’s, and 401 for a revoked key', async () => {
      const owner = await senderWithButtons();
      const other = await createSender(server);
      const id = await sentMessage(owner);
      for (const path of [REPLY('msg_00000000000000000000000000'), REPLY(encodeURIComponent("msg_' or 1=1 --")), REPLY(id)]) {
        const reply = await server.call('POST', path, { key: other.key, body: { text: 'STOP' } });
        assert.equal(reply.status, 404, `${path}: ${reply.text}`);
      }
      assert.equal((await server.call('POST', REPLY(id), { body: { text: 'hi' } })).status, 401);
      const second = await server.call('POST', '/v1/api-keys', { key: owner.key, body: { name: 'second' } });
      assert.equal((await server.call('DELETE', `/v1/api-keys/${second.body.id}`, { key: owner.key })).status, 200);
      assert.equal((await server.call('POST', REPLY(id), { key: second.body.key, body: { text: 'hi' } })).status, 401);
      const events = await server.call('GET', `/v1/messages/${id}/events`, { key: owner.key });
      assert.ok(!events.body.some((event: any) => event.event === 'message.replied'), 'nothing recorded');
      assert.equal((await suppressionRows(server, other.projectId)).size, 0, 'another project’s STOP suppressed nothing');
      assert.equal((await suppressionRows(server, owner.projectId)).size, 0);
    });

    it('opts the recipient out with a default keyword: later sends are 422 recipient_suppressed', async () => {
      const sender = await senderWithButtons();
      const id = await sentMessage(sender, '+5511987650002');
      const stop = await server.call('POST', REPLY(id), { key: sender.key, body: { text: '  stop ' } });
      assert.equal(stop.status, 200, stop.text);
      assert.equal(stop.body.optedOut, true);
      const suppression = await server.call('GET', `/v1/suppressions/${encodeURIComponent('+5511987650002')}`, { key: sender.key });
      assert.equal(suppression.status, 200, suppression.text);
      assert.equal(suppression.body.source, 'opt_out_keyword');
      assert.equal(suppression.body.scope, 'all');
      assert.match(suppression.body.reason, /stop/i);
      const again = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, '+5511987650002') });
      assert.equal(again.status, 422, again.text);
      assert.equal(again.body.code, 'recipient_suppressed');
      // Other numbers still go.
      assert.equal((await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, '+5511987650003') })).status, 202);
    });

    it('follows the project’s own keywords, and nothing when opt-outs are disabled', async () => {
      const sender = await senderWithButtons();
      const custom = await server.call('PUT', '/v1/projects/me/opt-out', { key: sender.key, body: { keywords: ['Cancelar', 'Stop promotions'] } });
      assert.equal(custom.status, 200, custom.text);
      const first = await sentMessage(sender, '+5511987650004');
      // STOP is no longer a keyword of this project.
      assert.equal((await server.call('POST', REPLY(first), { key: sender.key, body: { text: 'STOP' } })).body.optedOut, false);
      assert.equal((await suppressionRows(server, sender.projectId)).size, 0);
      // A tap on the "Stop promotions" quick reply (its payload is its text) matches.
      const tap = await server.call('POST', REPLY(first), { key: sender.key, body: { buttonIndex: 2 } });
      assert.equal(tap.body.optedOut, true);
      assert.equal((await suppressionRows(server, sender.projectId)).get('+5511987650004')?.source, 'opt_out_keyword');

      const off = await server.call('PUT', '/v1/projects/me/opt-out', { key: sender.key, body: { enabled: false } });
      assert.deepEqual(off.body, { keywords: ['Cancelar', 'Stop promotions'], enabled: false });
      const second = await sentMessage(sender, '+5511987650005');
      const ignored = await server.call('POST', REPLY(second), { key: sender.key, body: { text: 'cancelar' } });
      assert.equal(ignored.status, 200);
      assert.equal(ignored.body.optedOut, false);
      assert.ok(!(await suppressionRows(server, sender.projectId)).has('+5511987650005'));
      assert.equal((await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, '+5511987650005') })).status, 202);
    });

    it('erases a project’s replies with its messages', async () => {
      const sender = await senderWithButtons();
      const id = await sentMessage(sender);
      assert.equal((await server.call('POST', REPLY(id), { key: sender.key, body: { buttonIndex: 0 } })).status, 200);
      assert.equal((await server.call('POST', REPLY(id), { key: sender.key, body: { text: 'STOP' } })).status, 200);
      const replies = () => server.app.database.db.selectFrom('message_replies').select('id').where('project_id', '=', sender.projectId).execute();
      assert.equal((await replies()).length, 2);
      const erased = await server.call('DELETE', '/v1/projects/me', { key: sender.key });
      assert.equal(erased.status, 200, erased.text);
      assert.deepEqual(await replies(), []);
    });

    it('refuses a reply to a canceled message, which was never sent', async () => {
      const sender = await senderWithButtons();
      const later = new Date(Date.now() + 3600_000).toISOString();
      const scheduled = await server.call('POST', '/v1/messages', { key: sender.key, body: { ...sendBody(sender), sendAt: later } });
      assert.equal(scheduled.status, 202, scheduled.text);
      assert.equal((await server.call('POST', `/v1/messages/${scheduled.body.id}/cancel`, { key: sender.key })).status, 200);
      const reply = await server.call('POST', REPLY(scheduled.body.id), { key: sender.key, body: { text: 'hi' } });
      assert.equal(reply.status, 409, reply.text);
      assert.equal(reply.body.code, 'invalid_status_transition');
    });
  });
}
