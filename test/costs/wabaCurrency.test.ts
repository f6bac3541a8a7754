import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { databaseKinds } from '../support/databases.ts';
import { FAKE_WABA_ID, type FakeGraphApi, OTHER_WABA_ID, systemUserToken } from '../support/fakeGraphApi.ts';
import { waitForStatus } from '../support/sending.ts';
import type { TestServer } from '../support/server.ts';
import {
  CREDENTIALS,
  PHONE_NUMBER_ID,
  connectedProject,
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

// Meta bills each WABA in the currency chosen when it was created (GET /{waba-id}?fields=currency;
// a new currency means a new WABA). svc reads it with the account's other facts and prices each
// message from the card's rates in that currency: here a WABA in EUR and one in USD, with the
// rate card as Meta's own CSV files (test/costs/fixtures/meta: illustrative rates).

const FIXTURES = fileURLToPath(new URL('./fixtures/meta/', import.meta.url));
const OTHER_NUMBER = '106540399990001';
const OTHER_TOKEN = 'EAAG-usd-waba';
const BRAZIL = '+5511987654321';
const INDIA = '+919876543210';

/** The fixtures' rates by hand (millionths): EUR from rates-eur.csv (India's utility: the first band of volume-tiers-eur.csv), USD from rates-usd-2026-10-01.csv. */
const RATES = { EUR: { marketing: 54_000, utility: 1_200 }, USD: { marketing: 62_500, utility: 1_400 } };
const micros = (amount: number) => Math.round(amount * 1_000_000);

for (const kind of databaseKinds()) {
  describe(`costs in each WABA's currency (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let eur: { key: string; projectId: string };
    let usd: { key: string; projectId: string };

    /** A template approved at the WABA (the review webhook comes from that WABA). */
    async function approved(key: string, name: string, category: string, waba: string): Promise<void> {
      const created = await server.call('POST', '/v1/templates', { key, body: { name, language: 'en_US', category, components: [{ type: 'BODY', text: BODY }] } });
      assert.equal(created.status, 200, created.text);
      const providerTemplateId = await providerTemplateIdOf(server, created.body.id);
      fake.review(providerTemplateId, 'APPROVED');
      assert.equal((await postWebhook(server, templateWebhook(providerTemplateId, 'APPROVED', {}, waba))).status, 200);
      await templateWith(server, key, created.body.id, (template) => template.status === 'APPROVED');
    }

    /** Sends, and Meta reports it delivered with its pricing, from the number and WABA it went through. */
    async function deliveredCost(key: string, template: string, category: string, to: string, number: string, waba: string) {
      const id = await sendTemplate(server, key, template, to);
      const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
      const status = metaStatus(providerMessageId, 'delivered', id, { recipient_id: to.slice(1), pricing: metaPricing(category) });
      assert.equal((await postWebhook(server, statusWebhook([status], number, waba))).status, 200);
      return until('the message priced', async () => (await server.call('GET', `/v1/messages/${id}`, { key })).body.cost ?? undefined);
    }

    const todays = () => {
      const day = Date.now() - (Date.now() % 86_400_000);
      return `from=${new Date(day).toISOString()}&to=${new Date(day + 86_400_000).toISOString()}`;
    };

    before(async () => {
      setup = await startWhatsApp(kind, { env: { SVC_RATE_CARD: FIXTURES, SVC_COST_RECONCILE_INTERVAL: 'off' } });
      ({ fake, server } = setup);
      fake.currencies.set(FAKE_WABA_ID, 'EUR');
      fake.addPhoneNumber(OTHER_WABA_ID, OTHER_NUMBER);
      fake.currencies.set(OTHER_WABA_ID, 'USD');
      fake.tokens.set(OTHER_TOKEN, systemUserToken([OTHER_WABA_ID]));
      eur = await connectedProject(server);
      usd = await server.createProject('Dollars');
      const saved = await server.call('PUT', CREDENTIALS, {
        key: usd.key,
        body: { providerPhoneNumberId: OTHER_NUMBER, providerAccessToken: OTHER_TOKEN, providerBusinessAccountId: OTHER_WABA_ID },
      });
      assert.equal(saved.status, 200, saved.text);
      for (const [project, waba] of [[eur, FAKE_WABA_ID], [usd, OTHER_WABA_ID]] as const) {
        await approved(project.key, 'spring_sale', 'MARKETING', waba);
        await approved(project.key, 'order_update', 'UTILITY', waba);
      }
    });
    after(() => setup.close());

    it('reads each WABA’s currency from Meta when the credentials are saved', async () => {
      const asked = fake.of('business_account').filter((request) => request.query.get('fields')?.split(',').includes('currency'));
      assert.deepEqual([...new Set(asked.map((request) => request.path.split('/').at(-1)))].sort(), [FAKE_WABA_ID, OTHER_WABA_ID].sort());
      const rows = await server.app.database.db.selectFrom('provider_accounts').select(['project_id', 'currency']).execute();
      assert.deepEqual(Object.fromEntries(rows.map((row) => [row.project_id, row.currency])), { [eur.projectId]: 'EUR', [usd.projectId]: 'USD' });
    });

    it('prices each message from the rates in its WABA’s currency', async () => {
      assert.deepEqual(await deliveredCost(eur.key, 'spring_sale', 'marketing', BRAZIL, PHONE_NUMBER_ID, FAKE_WABA_ID), { amount: 0.054, currency: 'EUR' });
      assert.deepEqual(await deliveredCost(eur.key, 'order_update', 'utility', INDIA, PHONE_NUMBER_ID, FAKE_WABA_ID), { amount: 0.0012, currency: 'EUR' });
      assert.deepEqual(await deliveredCost(usd.key, 'spring_sale', 'marketing', BRAZIL, OTHER_NUMBER, OTHER_WABA_ID), { amount: 0.0625, currency: 'USD' });
      assert.deepEqual(await deliveredCost(usd.key, 'order_update', 'utility', INDIA, OTHER_NUMBER, OTHER_WABA_ID), { amount: 0.0014, currency: 'USD' });

      for (const [project, currency] of [[eur, 'EUR'], [usd, 'USD']] as const) {
        const reply = await server.call('GET', `/v1/analytics/cost?${todays()}`, { key: project.key });
        assert.equal(reply.status, 200, reply.text);
        assert.equal(reply.body.totals.length, 1, 'one currency: one total, as before');
        const [total] = reply.body.totals;
        assert.equal(total.currency, currency);
        assert.equal(micros(total.amount), RATES[currency].marketing + RATES[currency].utility);
        assert.equal(total.charged, 2);
      }
    });

    it('never adds amounts of two currencies: a project moved to a WABA in another currency sees each apart', async () => {
      // Meta changes a business's currency by moving its numbers to a new WABA: the project's
      // credentials now name the USD WABA (its templates copied there, as Meta's migration does).
      for (const template of [...fake.templates.values()].filter((t) => t.waba === FAKE_WABA_ID && t.name === 'spring_sale')) {
        fake.templates.set(`${template.id}9`, { ...template, id: `${template.id}9`, waba: OTHER_WABA_ID });
      }
      fake.tokens.set('EAAG-moved', systemUserToken([OTHER_WABA_ID]));
      const moved = await server.call('PUT', CREDENTIALS, {
        key: eur.key,
        body: { providerPhoneNumberId: OTHER_NUMBER, providerAccessToken: 'EAAG-moved', providerBusinessAccountId: OTHER_WABA_ID },
      });
      assert.equal(moved.status, 200, moved.text);
      assert.deepEqual(await deliveredCost(eur.key, 'spring_sale', 'marketing', BRAZIL, OTHER_NUMBER, OTHER_WABA_ID), { amount: 0.0625, currency: 'USD' });

      const byDay = (await server.call('GET', `/v1/analytics/cost?${todays()}`, { key: eur.key })).body;
      assert.deepEqual(
        byDay.totals.map((t: { currency: string; amount: number; charged: number }) => [t.currency, micros(t.amount), t.charged]),
        [
          ['EUR', RATES.EUR.marketing + RATES.EUR.utility, 2],
          ['USD', RATES.USD.marketing, 1],
        ],
      );
      assert.deepEqual(
        byDay.groups.map((g: { currency: string; amount: number }) => [g.currency, micros(g.amount)]),
        [
          ['EUR', RATES.EUR.marketing + RATES.EUR.utility],
          ['USD', RATES.USD.marketing],
        ],
        'the day is one group per currency',
      );
      const byCategory = (await server.call('GET', `/v1/analytics/cost?${todays()}&groupBy=category`, { key: eur.key })).body;
      assert.deepEqual(
        byCategory.groups.map((g: { category: string; currency: string; amount: number }) => [g.category, g.currency, micros(g.amount)]),
        [
          ['marketing', 'EUR', RATES.EUR.marketing],
          ['marketing', 'USD', RATES.USD.marketing],
          ['utility', 'EUR', RATES.EUR.utility],
        ],
      );
    });
  });
}
