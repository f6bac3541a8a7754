import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { databaseKinds } from '../support/databases.ts';
import { FAKE_WABA_ID, type FakeGraphApi } from '../support/fakeGraphApi.ts';
import type { TestServer } from '../support/server.ts';
import { waitForStatus } from '../support/sending.ts';
import {
  accountWebhook,
  connectedProject,
  PHONE_NUMBER_ID,
  postWebhook,
  providerTemplateIdOf,
  startWhatsApp,
  statusWebhook,
  templateWebhook,
  templateWith,
  type WhatsAppSetup,
} from '../support/whatsapp.ts';

// Meta's signed webhooks whose strings hold NUL (U+0000), which PostgreSQL's text cannot store:
// taken like any other (never a 500, nothing logged as an error), each NUL of a text column stored
// as U+FFFD, a NUL inside a JSON document kept as its escape (src/db/storableText.ts), the same on
// both databases.

const NUL = '\u0000';
const FFFD = '\uFFFD';

for (const kind of databaseKinds()) {
  describe(`Meta's webhooks with NUL in their strings (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;
    const errors: string[] = [];

    async function sent(): Promise<{ id: string; wamid: string }> {
      const reply = await server.call('POST', '/v1/messages', {
        key,
        body: { to: '+5511987654321', template: 'order_update', language: 'en_US', variables: { '1': 'Ana' } },
      });
      assert.equal(reply.status, 202, reply.text);
      const message = await waitForStatus(server, key, reply.body.id, 'SENT');
      return { id: reply.body.id, wamid: message.providerMessageId };
    }

    function status(message: { id: string; wamid: string }, name: string, extra: Record<string, unknown> = {}) {
      return { id: message.wamid, status: name, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: '5511987654321', biz_opaque_callback_data: message.id, ...extra };
    }

    async function pendingTemplate(name: string): Promise<{ id: string; providerId: string }> {
      const created = await server.call('POST', '/v1/templates', {
        key,
        body: { name, language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hello {{1}}, your order has shipped.' }] },
      });
      assert.equal(created.status, 200, created.text);
      return { id: created.body.id, providerId: await providerTemplateIdOf(server, created.body.id) };
    }

    before(async () => {
      const logger = pino({ level: 'error' }, { write: (line: string) => errors.push(line) });
      setup = await startWhatsApp(kind, { logger });
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
      const template = await pendingTemplate('order_update');
      fake.review(template.providerId, 'APPROVED');
      assert.equal((await postWebhook(server, templateWebhook(template.providerId, 'APPROVED'))).status, 200);
      await templateWith(server, key, template.id, (body) => body.status === 'APPROVED');
    });
    after(() => setup.close());

    it('a failed status whose error strings hold NUL: FAILED, with the error stored as given (a JSON document)', async () => {
      const message = await sent();
      const failed = status(message, 'failed', {
        errors: [{ code: 131026, title: `Message${NUL}undeliverable`, message: `Undeliverable${NUL}`, error_data: { details: `No${NUL}WhatsApp` } }],
        conversation: { id: `conv${NUL}`, origin: { type: `utility${NUL}` } },
        pricing: { billable: true, pricing_model: `CBP${NUL}`, category: `utility${NUL}` },
      });
      const reply = await postWebhook(server, statusWebhook([failed]));
      assert.equal(reply.status, 200, reply.text);
      const read = await server.call('GET', `/v1/messages/${message.id}`, { key });
      assert.equal(read.body.status, 'FAILED');
      // The error is stored as JSON text, where NUL is the escape `\u0000`: kept, on both databases.
      assert.deepEqual(read.body.error, { code: '131026', title: `Message${NUL}undeliverable`, message: `No${NUL}WhatsApp` });
      const events = await server.call('GET', `/v1/messages/${message.id}/events`, { key });
      assert.equal(events.status, 200, events.text);
    });

    it('statuses whose ids, number or account hold NUL are acknowledged or left for Meta to resend, never a 500', async () => {
      const message = await sent();
      for (const payload of [
        statusWebhook([status(message, 'delivered', { id: `wamid${NUL}x` })]),
        statusWebhook([status(message, 'delivered', { biz_opaque_callback_data: `${message.id}${NUL}` })]),
        statusWebhook([status(message, 'delivered', { recipient_id: `55${NUL}` })]),
        statusWebhook([status(message, 'delivered')], `${PHONE_NUMBER_ID}${NUL}`),
        statusWebhook([status(message, 'delivered')], PHONE_NUMBER_ID, `${FAKE_WABA_ID}${NUL}`),
        statusWebhook([status(message, `deliv${NUL}ered`)]),
      ]) {
        const reply = await postWebhook(server, payload);
        assert.ok(reply.status === 200 || reply.status === 503, `${reply.status} ${reply.text}`);
        if (reply.status === 503) assert.equal(reply.body.code, 'unavailable');
      }
      // The message's own status, untouched by none of the above but still readable.
      assert.equal((await server.call('GET', `/v1/messages/${message.id}`, { key })).status, 200);
      assert.equal((await postWebhook(server, statusWebhook([status(message, 'delivered')]))).status, 200);
      assert.equal((await server.call('GET', `/v1/messages/${message.id}`, { key })).body.status, 'DELIVERED');
    });

    it('a template status update whose strings hold NUL: applied, with its reason stored', async () => {
      const template = await pendingTemplate('nul_reason');
      const reply = await postWebhook(
        server,
        templateWebhook(template.providerId, 'REJECTED', {
          reason: `INVALID${NUL}FORMAT`,
          message_template_name: `nul${NUL}reason`,
          message_template_language: `en${NUL}US`,
          rejection_info: { reason: `Bad${NUL}body`, recommendation: `Fix${NUL}it` },
          other_info: { title: `T${NUL}`, description: `D${NUL}` },
        }),
      );
      assert.equal(reply.status, 200, reply.text);
      const settled = await templateWith(server, key, template.id, (body) => body.status === 'REJECTED');
      assert.ok(!settled.rejectionReason.includes(NUL), settled.rejectionReason);
      assert.ok(settled.rejectionReason.includes(`Bad${FFFD}body`), settled.rejectionReason);
      // An event, or a template id, holding NUL: not one svc knows, acknowledged.
      assert.equal((await postWebhook(server, templateWebhook(template.providerId, `APPR${NUL}OVED`))).status, 200);
      const byName = accountWebhook('message_template_status_update', { event: 'APPROVED', message_template_id: `${template.providerId}${NUL}` });
      assert.equal((await postWebhook(server, byName)).status, 200);
    });

    it('a category update and a quality update whose strings hold NUL are acknowledged', async () => {
      const template = await pendingTemplate('nul_category');
      const category = accountWebhook('template_category_update', {
        message_template_id: Number(template.providerId),
        message_template_name: `nul${NUL}category`,
        message_template_language: 'en_US',
        previous_category: `UTILITY${NUL}`,
        new_category: `MARKET${NUL}ING`,
      });
      assert.equal((await postWebhook(server, category)).status, 200);
      const announced = accountWebhook('template_category_update', {
        message_template_id: Number(template.providerId),
        new_category: 'UTILITY',
        correct_category: `MARKETING${NUL}`,
        category_update_timestamp: Math.floor(Date.now() / 1000) + 3600,
      });
      assert.equal((await postWebhook(server, announced)).status, 200);
      const quality = accountWebhook('phone_number_quality_update', { display_phone_number: `1555${NUL}`, event: `FLAGGED${NUL}`, current_limit: `TIER${NUL}` }, `${FAKE_WABA_ID}${NUL}`);
      assert.equal((await postWebhook(server, quality)).status, 200);
      const read = await server.call('GET', `/v1/templates/${template.id}`, { key });
      assert.equal(read.status, 200, read.text);
      assert.ok(!JSON.stringify(read.body).includes('\\u0000'), read.text);
    });

    it('logged no error', () => {
      assert.deepEqual(errors, []);
    });
  });
}
