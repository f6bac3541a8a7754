import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { type FakeGraphApi, OTHER_WABA_ID, systemUserToken } from '../support/fakeGraphApi.ts';
import { suppressionRows } from '../support/replies.ts';
import { buttonTap, inboundId, messagesWebhook, preferencesWebhook, seconds, textMessage } from '../support/whatsappInbound.ts';
import type { TestServer } from '../support/server.ts';
import { waitForStatus } from '../support/sending.ts';
import { deliveryRows, liveSecrets, setCallbackUrl, waitUntil } from '../support/webhookEvents.ts';
import { ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';
import {
  connectedProject,
  CREDENTIALS,
  postWebhook,
  providerTemplateIdOf,
  startWhatsApp,
  templateWebhook,
  templateWith,
  type WhatsAppSetup,
} from '../support/whatsapp.ts';

// Meta's inbound webhooks, the recipients' side (CONTRACT §9), in the shapes of Meta's webhooks
// reference: `messages` with a quick-reply tap (`type: "button"`), an interactive button reply or a
// text, `context.id` naming our message's wamid; and `user_preferences` (marketing messages
// stopped or resumed). Signed with the app secret like every notification.

const OTHER_NUMBER = '106540399990003';

for (const kind of databaseKinds()) {
  describe(`WhatsApp replies and opt-outs (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let receiver: WebhookReceiver;
    let projectId: string;
    let key: string;
    let otherKey: string;
    let endpointId: string;

    async function approvedTemplate(projectKey: string, name: string, category: string) {
      const created = await server.call('POST', '/v1/templates', {
        key: projectKey,
        body: { name, language: 'en_US', category, components: [{ type: 'BODY', text: 'Hello {{1}}, news about your order.' }] },
      });
      assert.equal(created.status, 200, created.text);
      const providerId = await providerTemplateIdOf(server, created.body.id);
      fake.review(providerId, 'APPROVED');
      await postWebhook(server, templateWebhook(providerId, 'APPROVED', {}, fake.templates.get(providerId)!.waba));
      await templateWith(server, projectKey, created.body.id, (body) => body.status === 'APPROVED');
    }

    function send(to: string, template = 'order_update', projectKey = key) {
      return server.call('POST', '/v1/messages', { key: projectKey, body: { to, template, language: 'en_US', variables: { '1': 'Ana' } } });
    }

    async function sent(to = '+5511987654321', projectKey = key): Promise<{ id: string; wamid: string }> {
      const reply = await send(to, 'order_update', projectKey);
      assert.equal(reply.status, 202, reply.text);
      const message = await waitForStatus(server, projectKey, reply.body.id, 'SENT');
      return { id: reply.body.id, wamid: message.providerMessageId };
    }

    async function repliesOf(id: string, projectKey = key): Promise<any[]> {
      const events = await server.call('GET', `/v1/messages/${id}/events`, { key: projectKey });
      assert.equal(events.status, 200, events.text);
      return events.body.filter((event: any) => event.event === 'message.replied');
    }

    before(async () => {
      setup = await startWhatsApp(kind);
      ({ fake, server } = setup);
      receiver = await startWebhookReceiver(ok);
      ({ projectId, key } = await connectedProject(server));
      await approvedTemplate(key, 'order_update', 'UTILITY');
      await approvedTemplate(key, 'big_sale', 'MARKETING');
      receiver.secrets = await liveSecrets(server.app, projectId);
      await setCallbackUrl(server.app, projectId, `${receiver.url}/callback`);
      const endpoint = await server.call('POST', '/v1/webhook-endpoints', { key, body: { url: `${receiver.url}/replies`, events: ['message.replied'] } });
      assert.equal(endpoint.status, 201, endpoint.text);
      endpointId = endpoint.body.id;
      // Another project, sending from another number.
      fake.addPhoneNumber(OTHER_WABA_ID, OTHER_NUMBER);
      fake.tokens.set('EAAG-other-replies', systemUserToken([OTHER_WABA_ID]));
      const other = await server.createProject('other');
      otherKey = other.key;
      const saved = await server.call('PUT', CREDENTIALS, {
        key: otherKey,
        body: { providerPhoneNumberId: OTHER_NUMBER, providerAccessToken: 'EAAG-other-replies', providerBusinessAccountId: OTHER_WABA_ID },
      });
      assert.equal(saved.status, 200, saved.text);
      await approvedTemplate(otherKey, 'order_update', 'UTILITY');
    });
    after(async () => {
      await setup.close();
      await receiver.close();
    });

    it('records a quick-reply tap named by context.id, emits message.replied to the endpoint only, and keeps the status', async () => {
      const message = await sent();
      const tap = buttonTap(message.wamid, 'Reschedule', 'RESCHEDULE_42');
      const posted = await postWebhook(server, messagesWebhook([tap]));
      assert.equal(posted.status, 200, posted.text);
      // Meta retries a notification it thinks failed: nothing is recorded twice.
      assert.equal((await postWebhook(server, messagesWebhook([tap]))).status, 200);

      const [reply, ...more] = await repliesOf(message.id);
      assert.equal(more.length, 0, 'one reply, retry or not');
      assert.deepEqual(reply.reply, { type: 'button', text: 'Reschedule', payload: 'RESCHEDULE_42' });
      assert.equal(reply.status, 'SENT');
      assert.equal((await server.call('GET', `/v1/messages/${message.id}`, { key })).body.status, 'SENT');

      await waitUntil(async () => {
        const rows = (await deliveryRows(server.app, projectId)).filter((row) => row.message_id === message.id && row.event === 'message.replied');
        return rows.length === 1 && rows[0]!.status === 'succeeded';
      });
      const rows = (await deliveryRows(server.app, projectId)).filter((row) => row.message_id === message.id);
      assert.deepEqual(
        rows.map((row) => `${row.event} ${row.endpoint_id === null ? 'callback' : row.endpoint_id === endpointId ? 'endpoint' : '?'}`).sort(),
        ['message.replied endpoint', 'message.sent callback'],
      );
      const arrival = receiver.arrivals.find((candidate) => candidate.deliveryId === rows.find((row) => row.event === 'message.replied')!.id)!;
      assert.deepEqual(arrival.verified, [true]);
      const body = JSON.parse(arrival.body);
      assert.deepEqual(
        { ...body, occurred_at: undefined },
        {
          event: 'message.replied',
          event_id: reply.id,
          message_id: message.id,
          to: '+5511987654321',
          template: 'order_update',
          reply: { type: 'button', text: 'Reschedule', payload: 'RESCHEDULE_42' },
          occurred_at: undefined,
        },
      );
    });

    it('records a text written in reply and an interactive button reply; a text with no context is no reply', async () => {
      const message = await sent();
      const interactive = {
        context: { from: '15550783881', id: message.wamid },
        from: '5511987654321',
        id: inboundId(),
        timestamp: seconds(),
        type: 'interactive',
        interactive: { type: 'button_reply', button_reply: { id: 'confirm-1', title: 'Yes, confirm' } },
      };
      const posted = await postWebhook(server, messagesWebhook([textMessage('Can it come on Friday?', { inReplyTo: message.wamid }), interactive, textMessage('Hello?')]));
      assert.equal(posted.status, 200, posted.text);
      const replies = await repliesOf(message.id);
      assert.deepEqual(
        replies.map((reply) => reply.reply),
        [
          { type: 'text', text: 'Can it come on Friday?' },
          { type: 'button', text: 'Yes, confirm', payload: 'confirm-1' },
        ],
      );
    });

    it('ignores a reply naming our message from another project’s number, an unknown wamid, and an unsigned post', async () => {
      const message = await sent();
      // Another project's number (of this deployment) cannot reply on our message.
      assert.equal((await postWebhook(server, messagesWebhook([buttonTap(message.wamid, 'Yes')], OTHER_NUMBER, OTHER_WABA_ID))).status, 200);
      // A number no project has here: acknowledged.
      assert.equal((await postWebhook(server, messagesWebhook([buttonTap(message.wamid, 'Yes')], '999000111222333'))).status, 200);
      assert.equal((await postWebhook(server, messagesWebhook([buttonTap('wamid.unknown', 'Yes')]))).status, 200);
      for (const signature of [null, 'sha256=' + '0'.repeat(64)]) {
        const refused = await postWebhook(server, messagesWebhook([buttonTap(message.wamid, 'STOP')]), signature);
        assert.equal(refused.status, 401);
      }
      assert.deepEqual(await repliesOf(message.id), []);
      assert.ok(!(await suppressionRows(server, projectId)).has('+5511987654321'), 'an unsigned STOP suppressed nothing');
      // Hostile and broken shapes are acknowledged and change nothing.
      const broken = messagesWebhook([
        { type: 'text', text: { body: 'STOP' } },
        { from: '5511987654321', id: 'wamid.x1', type: 'text', text: 'STOP' },
        { from: 'not-a-number', id: 'wamid.x2', type: 'text', text: { body: 'STOP' } },
        { from: '5511987654321', id: 'wamid.x3', type: 'button', button: { payload: { $ne: 1 } }, context: { id: message.wamid } },
        { from: '5511987654321', id: 'wamid.x4', type: 'image', image: { id: '1' }, context: { id: message.wamid } },
        null,
        'STOP',
      ]);
      assert.equal((await postWebhook(server, broken)).status, 200);
      assert.deepEqual(await repliesOf(message.id), []);
      assert.ok(!(await suppressionRows(server, projectId)).has('+5511987654321'));
    });

    it('suppresses the sender of an opt-out keyword, a reply or not, for the number’s project only', async () => {
      assert.equal((await postWebhook(server, messagesWebhook([textMessage('  Stop ', { from: '5511900000001' })]))).status, 200);
      const row = (await suppressionRows(server, projectId)).get('+5511900000001');
      assert.equal(row?.source, 'opt_out_keyword');
      assert.equal(row?.scope, 'all');
      const refused = await send('+5511900000001');
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.code, 'recipient_suppressed');
      assert.equal((await suppressionRows(server, (await server.call('GET', '/v1/projects/me', { key: otherKey })).body.id)).size, 0);

      // A quick reply whose payload is a keyword, in reply to a message: recorded and opted out.
      const message = await sent('+5511900000002');
      assert.equal((await postWebhook(server, messagesWebhook([buttonTap(message.wamid, 'Stop promotions', 'UNSUBSCRIBE', '5511900000002')]))).status, 200);
      assert.equal((await repliesOf(message.id)).length, 1);
      assert.equal((await suppressionRows(server, projectId)).get('+5511900000002')?.source, 'opt_out_keyword');
      // Not a keyword: a sentence containing one.
      assert.equal((await postWebhook(server, messagesWebhook([textMessage('please do not stop', { from: '5511900000003' })]))).status, 200);
      assert.ok(!(await suppressionRows(server, projectId)).has('+5511900000003'));
    });

    it('applies Meta’s marketing opt-out to MARKETING templates only, and lifts it on resume', async () => {
      const number = '+5511900000010';
      assert.equal((await postWebhook(server, preferencesWebhook('5511900000010', 'stop'))).status, 200);
      const suppression = await server.call('GET', `/v1/suppressions/${encodeURIComponent(number)}`, { key });
      assert.equal(suppression.status, 200, suppression.text);
      assert.equal(suppression.body.source, 'marketing_opt_out');
      assert.equal(suppression.body.scope, 'marketing');
      const marketing = await send(number, 'big_sale');
      assert.equal(marketing.status, 422, marketing.text);
      assert.equal(marketing.body.code, 'recipient_suppressed');
      assert.equal((await send(number, 'order_update')).status, 202, 'a UTILITY template still goes');

      assert.equal((await postWebhook(server, preferencesWebhook('5511900000010', 'resume'))).status, 200);
      assert.equal((await server.call('GET', `/v1/suppressions/${encodeURIComponent(number)}`, { key })).status, 404);
      assert.equal((await send(number, 'big_sale')).status, 202);
    });

    it('never lifts a keyword or hand-made suppression on resume, and a keyword widens a marketing opt-out', async () => {
      assert.equal((await server.call('POST', '/v1/suppressions', { key, body: { phoneNumber: '+5511900000020' } })).status, 201);
      assert.equal((await postWebhook(server, preferencesWebhook('5511900000020', 'resume'))).status, 200);
      assert.equal((await suppressionRows(server, projectId)).get('+5511900000020')?.source, 'api');
      assert.equal((await postWebhook(server, preferencesWebhook('5511900000020', 'stop'))).status, 200);
      assert.equal((await suppressionRows(server, projectId)).get('+5511900000020')?.scope, 'all', 'a wider suppression stays');

      assert.equal((await postWebhook(server, preferencesWebhook('5511900000021', 'stop'))).status, 200);
      assert.equal((await postWebhook(server, messagesWebhook([textMessage('BAJA', { from: '5511900000021' })]))).status, 200);
      const widened = (await suppressionRows(server, projectId)).get('+5511900000021');
      assert.deepEqual([widened?.source, widened?.scope], ['opt_out_keyword', 'all']);
      assert.equal((await send('+5511900000021', 'order_update')).status, 422);
      assert.equal((await postWebhook(server, preferencesWebhook('5511900000021', 'resume'))).status, 200);
      assert.equal((await suppressionRows(server, projectId)).get('+5511900000021')?.scope, 'all');
    });

    it('has no reply test helper under WhatsApp', async () => {
      const message = await sent();
      const helper = await server.call('POST', `/v1/test-helpers/messages/${message.id}/reply`, { key, body: { text: 'hi' } });
      assert.equal(helper.status, 404);
    });
  });
}
