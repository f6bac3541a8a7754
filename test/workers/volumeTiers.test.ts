import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { FAKE_WABA_ID, type FakeGraphApi, OTHER_WABA_ID, systemUserToken } from '../support/fakeGraphApi.ts';
import { waitForStatus } from '../support/sending.ts';
import type { TestServer } from '../support/server.ts';
import {
  accountWebhook,
  connectedProject,
  CREDENTIALS,
  postWebhook,
  providerTemplateIdOf,
  startWhatsApp,
  statusWebhook,
  templateWebhook,
  templateWith,
  until,
  type WhatsAppSetup,
} from '../support/whatsapp.ts';
import { BODY, metaPricing, metaStatus, sendTemplate } from '../support/whatsappSending.ts';

// Meta's volume tiers (account_update, event VOLUME_BASED_PRICING_TIER_UPDATE, as its webhooks
// reference and pricing page show it): once a WABA reaches a tier for a market and category,
// its messages delivered from then on that month are priced at the tier's rate; another WABA's
// keep the first tier. By the example rate card: India, utility, 0:1000000 → 0.0014 and
// 1000001:MAX → 0.0012 USD.

const OTHER_NUMBER = '106540399990002';
const INDIA = '+919876543210';
const LIST_RATE = 0.0014;
const TIER_RATE = 0.0012;

function tierWebhook(info: Record<string, unknown>, waba = FAKE_WABA_ID) {
  return accountWebhook('account_update', { volume_tier_info: info, event: 'VOLUME_BASED_PRICING_TIER_UPDATE' }, waba);
}

for (const kind of databaseKinds()) {
  describe(`volume tiers price WhatsApp messages (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;
    let otherKey: string;
    const month = new Date().toISOString().slice(0, 7);
    const reached = Math.floor(Date.now() / 1000) - 120;
    const upgrade = { tier_update_time: reached, pricing_category: 'UTILITY', tier: '1000001:MAX', effective_month: month, region: 'India' };

    async function approvedTemplate(projectKey: string) {
      const created = await server.call('POST', '/v1/templates', {
        key: projectKey,
        body: { name: 'order_update', language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: BODY }] },
      });
      assert.equal(created.status, 200, created.text);
      const providerId = await providerTemplateIdOf(server, created.body.id);
      fake.review(providerId, 'APPROVED');
      await postWebhook(server, templateWebhook(providerId, 'APPROVED', {}, fake.templates.get(providerId)!.waba));
      await templateWith(server, projectKey, created.body.id, (body) => body.status === 'APPROVED');
    }

    /** Sends a utility template to India from the project's number; Meta delivers and prices it. */
    async function deliveredCost(projectKey: string, phoneNumberId?: string): Promise<unknown> {
      const id = await sendTemplate(server, projectKey, 'order_update', INDIA);
      const { providerMessageId } = await waitForStatus(server, projectKey, id, 'SENT');
      const delivered = metaStatus(providerMessageId, 'delivered', id, { recipient_id: INDIA.slice(1), pricing: metaPricing('utility') });
      const reply = await postWebhook(server, phoneNumberId ? statusWebhook([delivered], phoneNumberId, OTHER_WABA_ID) : statusWebhook([delivered]));
      assert.equal(reply.status, 200, reply.text);
      return until('charged', async () => (await server.call('GET', `/v1/messages/${id}`, { key: projectKey })).body.cost ?? undefined);
    }

    const tiers = () =>
      server.app.database.db
        .selectFrom('volume_tiers')
        .select(['business_account_id', 'month', 'market', 'category', 'tier', 'effective_from'])
        .orderBy('business_account_id')
        .orderBy('tier')
        .execute()
        .then((rows) => rows.map((row) => ({ ...row, effective_from: Number(row.effective_from) })));

    before(async () => {
      setup = await startWhatsApp(kind);
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
      await approvedTemplate(key);
      // Another project, sending through another WABA.
      fake.addPhoneNumber(OTHER_WABA_ID, OTHER_NUMBER);
      fake.tokens.set('EAAG-other', systemUserToken([OTHER_WABA_ID]));
      otherKey = (await server.createProject('other')).key;
      const saved = await server.call('PUT', CREDENTIALS, {
        key: otherKey,
        body: { providerPhoneNumberId: OTHER_NUMBER, providerAccessToken: 'EAAG-other', providerBusinessAccountId: OTHER_WABA_ID },
      });
      assert.equal(saved.status, 200, saved.text);
      await approvedTemplate(otherKey);
    });
    after(() => setup.close());

    it('prices at the first tier until Meta names another', async () => {
      assert.deepEqual(await deliveredCost(key), { amount: LIST_RATE, currency: 'USD' });
    });

    it('stores the tier a WABA reached and prices its later deliveries at it; another WABA keeps the first tier', async () => {
      const reply = await postWebhook(server, tierWebhook(upgrade));
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.received, 1);
      assert.deepEqual(await tiers(), [
        { business_account_id: FAKE_WABA_ID, month, market: 'India', category: 'utility', tier: '1000001:MAX', effective_from: Math.max(reached * 1000, Date.parse(`${month}-01T00:00:00Z`)) },
      ]);
      assert.deepEqual(await deliveredCost(key), { amount: TIER_RATE, currency: 'USD' });
      assert.deepEqual(await deliveredCost(otherKey, OTHER_NUMBER), { amount: LIST_RATE, currency: 'USD' });
    });

    it('keeps the tier when a notification repeats or an older, lower one arrives late', async () => {
      const before = await tiers();
      // The same switch notified again later: Meta's official one is the earliest.
      assert.equal((await postWebhook(server, tierWebhook({ ...upgrade, tier_update_time: reached + 60 }))).status, 200);
      assert.deepEqual(await tiers(), before);
      // The first tier, notified late: stored beside the higher one, which still prices.
      assert.equal((await postWebhook(server, tierWebhook({ ...upgrade, tier: '0:1000000', tier_update_time: reached - 60 }))).status, 200);
      assert.equal((await tiers()).length, 2);
      assert.deepEqual(await deliveredCost(key), { amount: TIER_RATE, currency: 'USD' });
    });

    it('answers hostile or malformed notifications 200 and changes nothing', async () => {
      const before = await tiers();
      const hostile: unknown[] = [
        tierWebhook({ ...upgrade, tier: 'abc' }),
        tierWebhook({ ...upgrade, tier: '50:10' }),
        tierWebhook({ ...upgrade, tier: '1'.repeat(40) + ':MAX' }),
        tierWebhook({ ...upgrade, region: "India'; drop table volume_tiers; --" }),
        tierWebhook({ ...upgrade, region: 'x'.repeat(100) }),
        tierWebhook({ ...upgrade, region: 42 }),
        tierWebhook({ ...upgrade, pricing_category: 'UTILITY; --' }),
        tierWebhook({ ...upgrade, effective_month: '2026-13' }),
        tierWebhook({ ...upgrade, effective_month: '9999-01' }),
        tierWebhook({ ...upgrade, effective_month: { $gt: '' } }),
        tierWebhook({ ...upgrade, tier: ['1000001:MAX'] }),
        accountWebhook('account_update', { volume_tier_info: [upgrade], event: 'VOLUME_BASED_PRICING_TIER_UPDATE' }),
        accountWebhook('account_update', { volume_tier_info: upgrade, event: 'PARTNER_ADDED' }),
        accountWebhook('account_update', { volume_tier_info: upgrade }),
        accountWebhook('account_update', 'not an object' as never),
        // A WABA no project here sends through (another deployment's).
        tierWebhook({ ...upgrade, region: 'Brazil' }, '999999999999999'),
        { object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'account_update', value: { volume_tier_info: upgrade, event: 'VOLUME_BASED_PRICING_TIER_UPDATE' } }] }] },
      ];
      for (const payload of hostile) {
        const reply = await postWebhook(server, payload);
        assert.equal(reply.status, 200, `${JSON.stringify(payload)}: ${reply.text}`);
      }
      assert.deepEqual(await tiers(), before);
      // Unsigned or signed with another secret: refused, nothing stored.
      assert.equal((await postWebhook(server, tierWebhook({ ...upgrade, region: 'Brazil' }), null)).status, 401);
      assert.equal((await postWebhook(server, tierWebhook({ ...upgrade, region: 'Brazil' }), `sha256=${'0'.repeat(64)}`)).status, 401);
      assert.deepEqual(await tiers(), before);
      // Still priced at the tier.
      assert.deepEqual(await deliveredCost(key), { amount: TIER_RATE, currency: 'USD' });
    });
  });
}
