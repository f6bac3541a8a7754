import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recipientProblem } from '../../src/domain/messageRequest.ts';
import { databaseKinds } from '../support/databases.ts';
import type { FakeGraphApi } from '../support/fakeGraphApi.ts';
import { createSender, waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connectedProject, postWebhook, startWhatsApp, statusWebhook, until, type WhatsAppSetup } from '../support/whatsapp.ts';
import { approvedWhatsAppTemplate, messageRow, metaStatus, sendTemplate } from '../support/whatsappSending.ts';

// Business-scoped user ids (BSUID): users who hide their number behind a username are reached by
// the id Meta gives their pair with the business portfolio (`US.13491208655302741918`), or the
// parent id of linked portfolios (`US.ENT.11815799212886844830`), sent in `recipient`.

const BSUID = 'US.13491208655302741918';
const PARENT_BSUID = 'US.ENT.11815799212886844830';

describe('a recipient', () => {
  it('is an E.164 number or a BSUID in Meta’s forms', () => {
    for (const to of ['+5511987654321', BSUID, PARENT_BSUID, 'BR.abcDEF123', `DE.${'a'.repeat(128)}`]) {
      assert.equal(recipientProblem(to), undefined, to);
    }
    for (const to of ['5511987654321', 'us.1349', 'USA.1349', 'US.', 'US.ENT.', 'US.13-49', 'US.13 49', `DE.${'a'.repeat(129)}`, 'user.9373795779eb', 'US..1']) {
      assert.match(recipientProblem(to) ?? '', /E\.164|business-scoped/, to);
    }
  });
});

for (const kind of databaseKinds()) {
  describe(`BSUID recipients (${kind})`, () => {
    describe('WhatsApp', () => {
      let setup: WhatsAppSetup;
      let fake: FakeGraphApi;
      let server: TestServer;
      let key: string;

      before(async () => {
        setup = await startWhatsApp(kind);
        ({ fake, server } = setup);
        ({ key } = await connectedProject(server));
        await approvedWhatsAppTemplate(server, fake, key, 'order_shipped');
      });
      after(() => setup.close());

      it('sends to a BSUID in `recipient`, and matches its statuses though they carry no phone', async () => {
        const id = await sendTemplate(server, key, 'order_shipped', BSUID);
        const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
        const request = fake.sends().at(-1)!;
        assert.equal(request.body.recipient, BSUID);
        assert.ok(!('to' in request.body), 'to is for phone numbers');
        assert.equal(request.body.biz_opaque_callback_data, id);
        // Meta's status for a BSUID send: recipient_id empty, the BSUID in recipient_user_id.
        const delivered = metaStatus(providerMessageId, 'delivered', id, { recipient_id: '', recipient_user_id: BSUID });
        assert.equal((await postWebhook(server, statusWebhook([delivered]))).status, 200);
        const shown = await waitForStatus(server, key, id, 'DELIVERED');
        assert.equal(shown.to, BSUID);
        // Matched by the wamid alone too.
        const read = { ...metaStatus(providerMessageId, 'read', id, { recipient_id: '', recipient_user_id: BSUID }), biz_opaque_callback_data: undefined };
        await postWebhook(server, statusWebhook([read]));
        await waitForStatus(server, key, id, 'READ');
        const listed = (await server.call('GET', `/v1/messages?to=${encodeURIComponent(BSUID)}`, { key })).body;
        assert.deepEqual(listed.map((message: any) => message.id), [id]);
      });

      it('sends to a parent BSUID', async () => {
        const id = await sendTemplate(server, key, 'order_shipped', PARENT_BSUID);
        await waitForStatus(server, key, id, 'SENT');
        assert.equal(fake.sends().at(-1)!.body.recipient, PARENT_BSUID);
      });

      it('keeps suppressions for a BSUID', async () => {
        const suppressed = 'MX.99887766554433221100';
        const added = await server.call('POST', '/v1/suppressions', { key, body: { phoneNumber: suppressed, reason: 'asked by chat' } });
        assert.ok(added.status === 200 || added.status === 201, added.text);
        const refused = await server.call('POST', '/v1/messages', {
          key,
          body: { to: suppressed, template: 'order_shipped', language: 'en_US', variables: { '1': 'Ana', '2': 'A-1' } },
        });
        assert.equal(refused.status, 422, refused.text);
        assert.equal(refused.body.code, 'recipient_suppressed');
      });

      it('refuses what is neither a phone number nor a BSUID', async () => {
        for (const to of ['us.1349', 'US.13-49', `DE.${'a'.repeat(129)}`]) {
          const reply = await server.call('POST', '/v1/messages', {
            key,
            body: { to, template: 'order_shipped', language: 'en_US', variables: { '1': 'Ana', '2': 'A-1' } },
          });
          assert.equal(reply.status, 400, to);
          assert.equal(reply.body.code, 'validation_failed');
        }
      });

      it('an authentication template to a BSUID fails with 131062, never retried', async () => {
        const created = await server.call('POST', '/v1/templates', {
          key,
          body: {
            name: 'login_code',
            language: 'en_US',
            category: 'AUTHENTICATION',
            components: [{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] }],
          },
        });
        assert.equal(created.status, 200, created.text);
        const providerId = await until('its provider id', async () => (await server.app.database.db.selectFrom('templates').select('provider_template_id').where('id', '=', created.body.id).executeTakeFirstOrThrow()).provider_template_id ?? undefined);
        fake.review(providerId, 'APPROVED');
        await postWebhook(server, { object: 'whatsapp_business_account', entry: [{ id: fake.templates.get(providerId)!.waba, time: Math.floor(Date.now() / 1000), changes: [{ field: 'message_template_status_update', value: { event: 'APPROVED', message_template_id: Number(providerId), message_template_name: 'login_code', message_template_language: 'en_US', reason: 'NONE' } }] }] });
        await until('approved', async () => (await server.call('GET', `/v1/templates/${created.body.id}`, { key })).body.status === 'APPROVED');
        const sent = await server.call('POST', '/v1/messages', { key, body: { to: BSUID, template: 'login_code', language: 'en_US', variables: { '1': '482913' } } });
        assert.equal(sent.status, 202, sent.text);
        const failed = await waitForStatus(server, key, sent.body.id, 'FAILED');
        assert.equal(failed.error.code, '131062');
        assert.match(failed.error.message, /phone numbers/);
        assert.equal((await messageRow(server, sent.body.id)).attempts, 1);
      });
    });

    describe('sandbox', () => {
      let server: TestServer;
      before(async () => {
        server = await startTestServer(kind, { env: { SVC_SANDBOX_DELIVERY_DELAY_MS: '20', SVC_SANDBOX_READ_DELAY_MS: '20' } });
      });
      after(() => server.close());

      it('accepts a BSUID and walks it through its statuses', async () => {
        const sender = await createSender(server);
        const reply = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: { to: BSUID, template: sender.templateName, language: sender.language, variables: { '1': 'Ana', '2': 'A-1' } },
        });
        assert.equal(reply.status, 202, reply.text);
        assert.equal(reply.body.to, BSUID);
        await waitForStatus(server, sender.key, reply.body.id, 'READ');
      });
    });
  });
}
