import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { FAKE_WABA_ID, type FakeGraphApi, OTHER_WABA_ID, systemUserToken } from '../support/fakeGraphApi.ts';
import type { TestServer } from '../support/server.ts';
import { waitForStatus } from '../support/sending.ts';
import {
  connectedProject,
  CREDENTIALS,
  postWebhook,
  providerTemplateIdOf,
  startWhatsApp,
  statusWebhook,
  templateWebhook,
  templateWith,
  type WhatsAppSetup,
} from '../support/whatsapp.ts';

// Meta's status notifications: matched by svc's id (biz_opaque_callback_data) or Meta's wamid,
// applied only for the number that sent the message, and with times kept sane. What belongs to
// another number, account or app is acknowledged and ignored.

const OTHER_NUMBER = '106540399990002';

for (const kind of databaseKinds()) {
  describe(`WhatsApp inbound statuses (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;
    let otherKey: string;

    async function sent(projectKey = key): Promise<{ id: string; wamid: string }> {
      const reply = await server.call('POST', '/v1/messages', {
        key: projectKey,
        body: { to: '+5511987654321', template: 'order_update', language: 'en_US', variables: { '1': 'Ana' } },
      });
      assert.equal(reply.status, 202, reply.text);
      const message = await waitForStatus(server, projectKey, reply.body.id, 'SENT');
      return { id: reply.body.id, wamid: message.providerMessageId };
    }

    function status(message: { id: string; wamid: string }, name: string, extra: Record<string, unknown> = {}) {
      return { id: message.wamid, status: name, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: '5511987654321', biz_opaque_callback_data: message.id, ...extra };
    }

    async function approvedTemplate(projectKey: string) {
      const created = await server.call('POST', '/v1/templates', {
        key: projectKey,
        body: { name: 'order_update', language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hello {{1}}, your order has shipped.' }] },
      });
      assert.equal(created.status, 200, created.text);
      const providerId = await providerTemplateIdOf(server, created.body.id);
      fake.review(providerId, 'APPROVED');
      await postWebhook(server, templateWebhook(providerId, 'APPROVED', {}, fake.templates.get(providerId)!.waba));
      await templateWith(server, projectKey, created.body.id, (body) => body.status === 'APPROVED');
    }

    before(async () => {
      setup = await startWhatsApp(kind);
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
      await approvedTemplate(key);
      // Another project, sending from another number of another business account.
      fake.addPhoneNumber(OTHER_WABA_ID, OTHER_NUMBER);
      fake.tokens.set('EAAG-other', systemUserToken([OTHER_WABA_ID]));
      const other = await server.createProject('other');
      otherKey = other.key;
      const saved = await server.call('PUT', CREDENTIALS, {
        key: otherKey,
        body: { providerPhoneNumberId: OTHER_NUMBER, providerAccessToken: 'EAAG-other', providerBusinessAccountId: OTHER_WABA_ID },
      });
      assert.equal(saved.status, 200, saved.text);
      await approvedTemplate(otherKey);
    });
    after(() => setup.close());

    it('applies a status only for the number that sent the message', async () => {
      const message = await sent();
      // Another project's number naming this message (by svc id, with another wamid): not ours to apply.
      const foreign = status({ id: message.id, wamid: 'wamid.someone-else' }, 'read');
      assert.equal((await postWebhook(server, statusWebhook([foreign], OTHER_NUMBER, OTHER_WABA_ID))).status, 200);
      assert.equal((await server.call('GET', `/v1/messages/${message.id}`, { key })).body.status, 'SENT');
      // The right number: applied.
      assert.equal((await postWebhook(server, statusWebhook([status(message, 'delivered')]))).status, 200);
      assert.equal((await server.call('GET', `/v1/messages/${message.id}`, { key })).body.status, 'DELIVERED');
    });

    it('matches by wamid when Meta sends no svc id', async () => {
      const message = await sent();
      const { biz_opaque_callback_data: _id, ...byWamid } = status(message, 'delivered');
      assert.equal((await postWebhook(server, statusWebhook([byWamid]))).status, 200);
      assert.equal((await server.call('GET', `/v1/messages/${message.id}`, { key })).body.status, 'DELIVERED');
      // The same wamid from another project's number changes nothing (only the message's own numbers count).
      const read = { ...byWamid, status: 'read' };
      assert.equal((await postWebhook(server, statusWebhook([read], OTHER_NUMBER, OTHER_WABA_ID))).status, 200);
      assert.equal((await server.call('GET', `/v1/messages/${message.id}`, { key })).body.status, 'DELIVERED');
    });

    it('acknowledges and ignores a number, business account or product no project has here', async () => {
      const message = await sent();
      const missing = { ...status(message, 'read'), id: 'wamid.theirs', biz_opaque_callback_data: 'msg_00000000000000000000000000' };
      for (const payload of [
        // Another deployment of the same Meta app: its own messages, and even one of our ids with its wamid.
        statusWebhook([missing, { ...status(message, 'read'), id: 'wamid.theirs-2' }], '999000111222333', '999000111222000'),
        { ...statusWebhook([status(message, 'read')]), object: 'instagram' },
        { object: 'whatsapp_business_account', entry: [{ id: FAKE_WABA_ID, changes: [{ field: 'messages', value: { statuses: [status(message, 'read')] } }] }] },
      ]) {
        const reply = await postWebhook(server, payload);
        assert.equal(reply.status, 200, `${reply.text}: no 503, Meta need not send it again`);
      }
      assert.equal((await server.call('GET', `/v1/messages/${message.id}`, { key })).body.status, 'SENT');
      // Our number naming an svc message not found yet: Meta should send it again.
      assert.equal((await postWebhook(server, statusWebhook([missing]))).status, 503);
      assert.equal((await server.call('GET', `/v1/messages/${message.id}`, { key })).body.status, 'SENT');
    });

    it('keeps an absurd or unreadable timestamp from making the message unreadable', async () => {
      for (const timestamp of ['10000000000000', { seconds: 1 }, 'soon', -1]) {
        const message = await sent();
        const before = Date.now();
        const reply = await postWebhook(server, statusWebhook([status(message, 'delivered', { timestamp })]));
        assert.equal(reply.status, 200, JSON.stringify(timestamp));
        const read = await server.call('GET', `/v1/messages/${message.id}`, { key });
        assert.equal(read.status, 200, `${JSON.stringify(timestamp)}: ${read.text}`);
        assert.equal(read.body.status, 'DELIVERED');
        const at = Date.parse(read.body.deliveredAt);
        assert.ok(at >= Date.parse(read.body.queuedAt) && at <= before + 120_000, `${JSON.stringify(timestamp)} → ${read.body.deliveredAt}`);
        assert.equal((await server.call('GET', `/v1/messages/${message.id}/events`, { key })).status, 200);
        assert.equal((await server.call('GET', '/v1/messages?limit=1', { key })).status, 200);
      }
    });

    it('applies a status of a message sent before the project changed its number, by its wamid', async () => {
      fake.addPhoneNumber(FAKE_WABA_ID, '106540352241111');
      const project = await connectedProject(server, 'EAAG-first-token', '106540352241111');
      await approvedTemplate(project.key);
      const message = await sent(project.key);
      fake.addPhoneNumber(FAKE_WABA_ID, '106540352240000');
      const moved = await server.call('PUT', CREDENTIALS, {
        key: project.key,
        body: { providerPhoneNumberId: '106540352240000', providerAccessToken: 'EAAG-first-token', providerBusinessAccountId: FAKE_WABA_ID },
      });
      assert.equal(moved.status, 200, moved.text);
      // No project sends from the old number any more.
      assert.equal((await postWebhook(server, statusWebhook([status(message, 'delivered')], '106540352241111'))).status, 200);
      assert.equal((await server.call('GET', `/v1/messages/${message.id}`, { key: project.key })).body.status, 'DELIVERED');
    });
  });
}
