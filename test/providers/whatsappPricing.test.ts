import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pricingOf } from '../../src/domain/pricing.ts';
import { databaseKinds } from '../support/databases.ts';
import { FAKE_WABA_ID, type FakeGraphApi } from '../support/fakeGraphApi.ts';
import { createSender, waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connectedProject, postWebhook, startWhatsApp, statusWebhook, TOKEN, until, type WhatsAppSetup } from '../support/whatsapp.ts';
import { approvedWhatsAppTemplate, messageRow, metaPricing, metaStatus, sendTemplate } from '../support/whatsappSending.ts';

// What each message costs, as Meta says it in the `pricing` object of its sent, delivered and
// read statuses (per-message pricing), recorded on the message and shown as its `pricing`.

describe('Meta’s pricing object', () => {
  it('is read as Meta documents it', () => {
    assert.deepEqual(pricingOf({ billable: true, pricing_model: 'PMP', category: 'marketing', type: 'regular' }), {
      billable: true,
      pricingModel: 'PMP',
      category: 'marketing',
      type: 'regular',
    });
    assert.deepEqual(pricingOf({ billable: false, pricing_model: 'PMP', category: 'utility', type: 'free_customer_service' }), {
      billable: false,
      pricingModel: 'PMP',
      category: 'utility',
      type: 'free_customer_service',
    });
    // Before `type` existed, and once `billable` is gone.
    assert.deepEqual(pricingOf({ billable: false, pricing_model: 'CBP', category: 'service' }), {
      billable: false,
      pricingModel: 'CBP',
      category: 'service',
      type: 'free_customer_service',
    });
    assert.equal(pricingOf({ pricing_model: 'PMP', category: 'authentication-international', type: 'regular' })?.billable, true);
    assert.equal(pricingOf({ pricing_model: 'PMP', category: 'referral_conversion', type: 'free_entry_point' })?.billable, false);
  });

  it('is ignored when absent or unreadable', () => {
    for (const raw of [undefined, null, 'PMP', [], {}, { pricing_model: 'PMP' }, { category: 'marketing' },
      { pricing_model: 'PMP', category: '<script>' }, { pricing_model: 'PMP', category: 'x'.repeat(65) }, { pricing_model: 1, category: 'marketing' }]) {
      assert.equal(pricingOf(raw), undefined, JSON.stringify(raw));
    }
  });
});

for (const kind of databaseKinds()) {
  describe(`message pricing (${kind})`, () => {
    describe('WhatsApp', () => {
      let setup: WhatsAppSetup;
      let fake: FakeGraphApi;
      let server: TestServer;
      let key: string;

      before(async () => {
        setup = await startWhatsApp(kind);
        ({ fake, server } = setup);
        ({ key } = await connectedProject(server));
        await approvedWhatsAppTemplate(server, fake, key, 'spring_sale', 'MARKETING');
      });
      after(() => setup.close());

      it('records the pricing of Meta’s statuses on the message, and shows it', async () => {
        const id = await sendTemplate(server, key, 'spring_sale');
        const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
        const before = (await server.call('GET', `/v1/messages/${id}`, { key })).body;
        assert.ok(!('pricing' in before), 'nothing said yet');

        // Meta's own `sent` status comes after svc recorded SENT: its pricing is still taken.
        const sent = statusWebhook([metaStatus(providerMessageId, 'sent', id, { pricing: metaPricing('marketing') })]);
        assert.equal((await postWebhook(server, sent)).status, 200);
        const priced = await until('the pricing recorded', async () => {
          const message = (await server.call('GET', `/v1/messages/${id}`, { key })).body;
          return message.pricing ? message : undefined;
        });
        assert.deepEqual(priced.pricing, { billable: true, pricingModel: 'PMP', category: 'marketing', type: 'regular' });
        assert.equal(priced.status, 'SENT');

        // Delivered with the same pricing, read without any: the pricing stays.
        await postWebhook(server, statusWebhook([metaStatus(providerMessageId, 'delivered', id, { pricing: metaPricing('marketing') })]));
        await postWebhook(server, statusWebhook([metaStatus(providerMessageId, 'read', id)]));
        const read = await waitForStatus(server, key, id, 'READ');
        assert.deepEqual(read.pricing, priced.pricing);
        const listed = (await server.call('GET', '/v1/messages?limit=5', { key })).body.find((message: any) => message.id === id);
        assert.deepEqual(listed.pricing, priced.pricing);
        // The spec's fields are as they were.
        for (const field of ['id', 'status', 'to', 'template', 'queuedAt', 'sentAt', 'deliveredAt', 'readAt']) assert.ok(field in read, field);
      });

      it('takes a later, different pricing (a free customer-service message), and ignores an unreadable one', async () => {
        const id = await sendTemplate(server, key, 'spring_sale', '+5511987650011');
        const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
        const free = metaPricing('utility', 'free_customer_service');
        await postWebhook(server, statusWebhook([metaStatus(providerMessageId, 'delivered', id, { pricing: free })]));
        await waitForStatus(server, key, id, 'DELIVERED');
        assert.deepEqual(JSON.parse((await messageRow(server, id)).pricing!), {
          billable: false,
          pricingModel: 'PMP',
          category: 'utility',
          type: 'free_customer_service',
        });
        await postWebhook(server, statusWebhook([metaStatus(providerMessageId, 'read', id, { pricing: { category: '"; drop table messages; --' } })]));
        const read = await waitForStatus(server, key, id, 'READ');
        assert.equal(read.pricing.type, 'free_customer_service');
      });

      it('never records pricing from another project’s number', async () => {
        const otherNumber = '106540352249999';
        fake.addPhoneNumber(FAKE_WABA_ID, otherNumber);
        await connectedProject(server, TOKEN, otherNumber);
        const id = await sendTemplate(server, key, 'spring_sale', '+5511987650012');
        const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
        const foreign = statusWebhook([metaStatus(providerMessageId, 'sent', id, { pricing: metaPricing('marketing') })], otherNumber);
        assert.equal((await postWebhook(server, foreign)).status, 200);
        assert.equal((await messageRow(server, id)).pricing, null);
      });
    });

    describe('sandbox', () => {
      let server: TestServer;
      before(async () => {
        server = await startTestServer(kind);
      });
      after(() => server.close());

      it('prices each template message as Meta would: per message, at its category’s rate', async () => {
        const sender = await createSender(server);
        const reply = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: { to: '+5511987654321', template: sender.templateName, language: sender.language, variables: { '1': 'Ana', '2': 'A-1' } },
        });
        assert.equal(reply.status, 202, reply.text);
        assert.ok(!('pricing' in reply.body), 'the 202 is as it always was');
        const sent = await waitForStatus(server, sender.key, reply.body.id, 'SENT');
        assert.deepEqual(sent.pricing, { billable: true, pricingModel: 'PMP', category: 'utility', type: 'regular' });
      });
    });
  });
}
