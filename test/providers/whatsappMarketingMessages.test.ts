import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { type FakeGraphApi, graphError } from '../support/fakeGraphApi.ts';
import { waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import {
  accountWebhook,
  connectedProject,
  postWebhook,
  providerTemplateIdOf,
  startWhatsApp,
  statusWebhook,
  templateWith,
  until,
  type WhatsAppSetup,
} from '../support/whatsapp.ts';
import { approvedWhatsAppTemplate, messageRow, metaPricing, metaStatus, sendTemplate } from '../support/whatsappSending.ts';

// WhatsApp's Marketing Messages API (marketing-messages/send-marketing-messages): per project,
// MARKETING templates (by their latest category) go to POST /{phone-number-id}/marketing_messages
// with `product_policy` CLOUD_API_FALLBACK (fallback) or STRICT (strict); the API that took each
// message is its `route`; Meta's MM API errors (131055, 134100, 134101, 134102) as Meta documents.

const SETTING = '/v1/projects/me/marketing-messages';
const MINUTE = 60_000;

async function setMode(server: TestServer, key: string, mode: string) {
  const reply = await server.call('PUT', SETTING, { key, body: { mode } });
  assert.equal(reply.status, 200, reply.text);
  assert.deepEqual(reply.body, { mode });
}

for (const kind of databaseKinds()) {
  describe(`Marketing Messages API (${kind})`, () => {
    describe('WhatsApp', () => {
      let setup: WhatsAppSetup;
      let fake: FakeGraphApi;
      let server: TestServer;
      let key: string;
      let saleId: string;

      before(async () => {
        setup = await startWhatsApp(kind);
        ({ fake, server } = setup);
        ({ key } = await connectedProject(server));
        saleId = await approvedWhatsAppTemplate(server, fake, key, 'spring_sale', 'MARKETING');
        await approvedWhatsAppTemplate(server, fake, key, 'order_shipped', 'UTILITY');
      });
      after(() => setup.close());

      /** A message's first answer recorded (attempts 1). */
      async function afterFirstAnswer(id: string) {
        return until(`the first answer to ${id}`, async () => {
          const row = await messageRow(server, id);
          return row.attempts >= 1 ? row : undefined;
        });
      }

      it('is off by default: MARKETING templates go through Cloud API, route cloud_api', async () => {
        await setMode(server, key, 'off');
        assert.deepEqual((await server.call('GET', SETTING, { key })).body, { mode: 'off' });
        const before = fake.marketingSends().length;
        const id = await sendTemplate(server, key, 'spring_sale', '+5511987651001');
        const sent = await waitForStatus(server, key, id, 'SENT');
        assert.equal(sent.route, 'cloud_api');
        assert.equal(fake.marketingSends().length, before);
        assert.equal(fake.sends().at(-1)!.body.biz_opaque_callback_data, id);
      });

      it('fallback: MARKETING templates go to /marketing_messages with CLOUD_API_FALLBACK; others stay on /messages', async () => {
        await setMode(server, key, 'fallback');
        const id = await sendTemplate(server, key, 'spring_sale', '+5511987651002');
        const sent = await waitForStatus(server, key, id, 'SENT');
        assert.equal(sent.route, 'marketing_messages');
        const request = fake.marketingSends().at(-1)!;
        assert.equal(request.body.product_policy, 'CLOUD_API_FALLBACK');
        assert.equal(request.body.to, '+5511987651002');
        assert.equal(request.body.type, 'template');
        assert.equal(request.body.template.name, 'spring_sale');
        assert.equal(request.body.biz_opaque_callback_data, id);
        assert.ok(fake.marketingLite.has(sent.providerMessageId), 'taken by the Marketing Messages API');
        // Its statuses say marketing_lite: accepted and shown as Meta gives it.
        const delivered = metaStatus(sent.providerMessageId, 'delivered', id, { pricing: metaPricing('marketing_lite') });
        assert.equal((await postWebhook(server, statusWebhook([delivered]))).status, 200);
        const shown = await waitForStatus(server, key, id, 'DELIVERED');
        assert.equal(shown.pricing.category, 'marketing_lite');
        assert.equal(shown.route, 'marketing_messages');

        const utility = await sendTemplate(server, key, 'order_shipped', '+5511987651003');
        const utilitySent = await waitForStatus(server, key, utility, 'SENT');
        assert.equal(utilitySent.route, 'cloud_api');
        assert.equal(fake.sends().at(-1)!.body.biz_opaque_callback_data, utility);
        assert.ok(!('product_policy' in fake.sends().at(-1)!.body));
      });

      it('strict: STRICT; a business Meta has not onboarded fails with 134102, never retried', async () => {
        await setMode(server, key, 'strict');
        fake.marketingMessagesOnboarded = false;
        try {
          const id = await sendTemplate(server, key, 'spring_sale', '+5511987651004');
          const failed = await waitForStatus(server, key, id, 'FAILED');
          assert.equal(failed.error.code, '134102');
          assert.equal(fake.marketingSends().at(-1)!.body.product_policy, 'STRICT');
          assert.equal((await messageRow(server, id)).attempts, 1);
          assert.ok(!('route' in failed), 'never taken');
        } finally {
          fake.marketingMessagesOnboarded = true;
        }
      });

      it('fallback: a business not onboarded is sent through Cloud API by Meta (pricing marketing)', async () => {
        await setMode(server, key, 'fallback');
        fake.marketingMessagesOnboarded = false;
        try {
          const id = await sendTemplate(server, key, 'spring_sale', '+5511987651005');
          const sent = await waitForStatus(server, key, id, 'SENT');
          assert.equal(sent.route, 'marketing_messages');
          assert.ok(!fake.marketingLite.has(sent.providerMessageId));
          await postWebhook(server, statusWebhook([metaStatus(sent.providerMessageId, 'delivered', id, { pricing: metaPricing('marketing') })]));
          assert.equal((await waitForStatus(server, key, id, 'DELIVERED')).pricing.category, 'marketing');
        } finally {
          fake.marketingMessagesOnboarded = true;
        }
      });

      it('134101 (template still syncing with the ad account) waits at least 10 minutes, not the next backoff step', async () => {
        await setMode(server, key, 'fallback');
        const providerId = await providerTemplateIdOf(server, saleId);
        fake.syncingTemplates.add(providerId);
        try {
          const startedAt = Date.now();
          const id = await sendTemplate(server, key, 'spring_sale', '+5511987651006');
          const row = await afterFirstAnswer(id);
          assert.equal(row.status, 'QUEUED');
          assert.ok(row.due_at! >= startedAt + 10 * MINUTE, `due ${row.due_at! - startedAt} ms later`);
          assert.ok(row.due_at! < startedAt + 60 * MINUTE);
          assert.equal(fake.marketingSends().at(-1)!.body.biz_opaque_callback_data, id);
        } finally {
          fake.syncingTemplates.delete(providerId);
        }
      });

      it('134100 (the template is not MARKETING at Meta) and 131055 fail at once with Meta’s code', async () => {
        await setMode(server, key, 'fallback');
        const providerId = await providerTemplateIdOf(server, saleId);
        const template = fake.templates.get(providerId)!;
        template.category = 'UTILITY'; // re-categorised at Meta, its webhook not (yet) arrived
        try {
          const id = await sendTemplate(server, key, 'spring_sale', '+5511987651007');
          const failed = await waitForStatus(server, key, id, 'FAILED');
          assert.equal(failed.error.code, '134100');
          assert.equal((await messageRow(server, id)).attempts, 1);
        } finally {
          template.category = 'MARKETING';
        }
        fake.failNext('marketing_send', graphError(400, 131055, 'Method not allowed', 'Only marketing template messages are supported'));
        const other = await sendTemplate(server, key, 'spring_sale', '+5511987651008');
        assert.equal((await waitForStatus(server, key, other, 'FAILED')).error.code, '131055');
      });

      it('routes by the template’s category when the message is dispatched (a completed template_category_update), not when accepted', async () => {
        await setMode(server, key, 'fallback');
        const utilityId = await approvedWhatsAppTemplate(server, fake, key, 'back_in_stock', 'UTILITY');
        const providerId = await providerTemplateIdOf(server, utilityId);
        const reply = await server.call('POST', '/v1/messages', {
          key,
          body: {
            to: '+5511987651009',
            template: 'back_in_stock',
            language: 'en_US',
            variables: { '1': 'Ana', '2': 'A-1' },
            sendAt: new Date(Date.now() + 3600_000).toISOString(),
          },
        });
        assert.equal(reply.status, 202, reply.text);
        const id = reply.body.id;
        // An announcement alone changes nothing; the completed change does.
        const announced = accountWebhook('template_category_update', {
          message_template_id: Number(providerId),
          new_category: 'UTILITY',
          correct_category: 'MARKETING',
          category_update_timestamp: Math.floor(Date.now() / 1000) + 86_400,
        });
        assert.equal((await postWebhook(server, announced)).status, 200);
        await templateWith(server, key, utilityId, (template) => template.upcomingCategory !== undefined && template.category === 'UTILITY');
        fake.templates.get(providerId)!.category = 'MARKETING';
        const made = accountWebhook('template_category_update', {
          message_template_id: Number(providerId),
          previous_category: 'UTILITY',
          new_category: 'MARKETING',
        });
        assert.equal((await postWebhook(server, made)).status, 200);
        await templateWith(server, key, utilityId, (template) => template.category === 'MARKETING');
        // Its time comes.
        await server.app.database.db.updateTable('messages').set({ due_at: Date.now() }).where('id', '=', id).execute();
        const sent = await waitForStatus(server, key, id, 'SENT');
        assert.equal(sent.route, 'marketing_messages');
        assert.equal((await messageRow(server, id)).category, 'UTILITY', 'accepted as UTILITY');
        assert.equal(fake.marketingSends().at(-1)!.body.biz_opaque_callback_data, id);
      });

      it('validates the setting, and keeps it per project', async () => {
        for (const body of [{ mode: 'sometimes' }, {}, { mode: 'strict', extra: true }, { mode: null }]) {
          const reply = await server.call('PUT', SETTING, { key, body });
          assert.equal(reply.status, 400, JSON.stringify(body));
          assert.equal(reply.body.code, 'validation_failed');
        }
        assert.equal((await server.call('GET', SETTING)).status, 401);
        assert.equal((await server.call('PUT', SETTING, { body: { mode: 'strict' } })).status, 401);
        await setMode(server, key, 'strict');
        const other = await server.createProject();
        assert.deepEqual((await server.call('GET', SETTING, { key: other.key })).body, { mode: 'off' });
        await setMode(server, other.key, 'fallback');
        assert.deepEqual((await server.call('GET', SETTING, { key })).body, { mode: 'strict' });
      });
    });

    describe('sandbox', () => {
      let server: TestServer;
      before(async () => {
        server = await startTestServer(kind);
      });
      after(() => server.close());

      it('follows the setting: a MARKETING template is taken by the Marketing Messages API, priced marketing_lite', async () => {
        const project = await server.createProject();
        const { key } = project;
        assert.equal((await server.call('PUT', '/v1/projects/me/provider-credentials', { key, body: { providerPhoneNumberId: '1065559999', providerAccessToken: 'EAAG-x' } })).status, 200);
        const created = await server.call('POST', '/v1/templates', {
          key,
          body: { name: 'flash_sale', language: 'en_US', category: 'MARKETING', components: [{ type: 'BODY', text: 'Hello {{1}}, {{2}} is on sale today.' }] },
        });
        assert.equal(created.status, 200, created.text);
        await server.call('POST', `/v1/test-helpers/templates/${created.body.id}/review`, { key, body: { status: 'APPROVED' } });
        const send = async (to: string) => {
          const reply = await server.call('POST', '/v1/messages', { key, body: { to, template: 'flash_sale', language: 'en_US', variables: { '1': 'Ana', '2': 'Tea' } } });
          assert.equal(reply.status, 202, reply.text);
          return waitForStatus(server, key, reply.body.id, 'SENT');
        };
        const plain = await send('+5511987652001');
        assert.equal(plain.route, 'cloud_api');
        assert.equal(plain.pricing.category, 'marketing');
        await setMode(server, key, 'fallback');
        const lite = await send('+5511987652002');
        assert.equal(lite.route, 'marketing_messages');
        assert.equal(lite.pricing.category, 'marketing_lite');
      });
    });
  });
}
