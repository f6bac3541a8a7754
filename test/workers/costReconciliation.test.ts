import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { takeJobLease } from '../../src/db/jobLeases.ts';
import { createCostReconciliationJob } from '../../src/workers/costReconciliation.ts';
import { createProviderAccountJob } from '../../src/workers/providerAccounts.ts';
import type { Job } from '../../src/workers/loop.ts';
import { databaseKinds } from '../support/databases.ts';
import { FAKE_WABA_ID, type FakeGraphApi, graphError } from '../support/fakeGraphApi.ts';
import { waitForStatus } from '../support/sending.ts';
import { TEST_ENCRYPTION_KEY, type TestServer } from '../support/server.ts';
import { connectedProject, postWebhook, startWhatsApp, statusWebhook, until, type WhatsAppSetup } from '../support/whatsapp.ts';
import { approvedWhatsAppTemplate, metaPricing, metaStatus, sendTemplate } from '../support/whatsappSending.ts';

// The reconciliation job: svc's cost counters beside Meta's pricing_analytics for the WABA (the
// fake serves it as Meta's analytics reference documents it), per day, with the differences
// stored for GET /v1/analytics/cost/reconciliation and counted in a metric.

const DAY = 86_400_000;

for (const kind of databaseKinds()) {
  describe(`cost reconciliation with Meta (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;
    let job: Job;
    let metrics: Registry;
    const today = Date.now() - (Date.now() % DAY);
    const range = `from=${new Date(today - 2 * DAY).toISOString()}&to=${new Date(today + DAY).toISOString()}`;

    /** A job as a worker process builds it (each process its own), run here with the test's clock. */
    function aProcessJob(registry = new Registry()): Job {
      const { config, database, provider, logger } = server.app;
      const every6h = { ...config, cost: { ...config.cost, reconcileIntervalMs: 6 * 3_600_000 } };
      const made = createCostReconciliationJob({ config: every6h, database, provider, logger, metrics: registry, encryptionKey: Buffer.from(TEST_ENCRYPTION_KEY, 'base64') });
      assert.ok(made, 'the WhatsApp provider has pricing_analytics');
      return made;
    }

    before(async () => {
      // The server's own workers do not reconcile (off): the test's jobs run on the test's clock.
      setup = await startWhatsApp(kind, { env: { SVC_COST_RECONCILE_INTERVAL: 'off' } });
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
      await approvedWhatsAppTemplate(server, fake, key, 'spring_sale', 'MARKETING');
      metrics = new Registry();
      job = aProcessJob(metrics);
    });
    after(() => setup.close());

    it('stores, per day, Meta’s totals beside svc’s and where they differ', async () => {
      // One marketing message to Brazil, delivered today: USD 0.0625 by the example card.
      const id = await sendTemplate(server, key, 'spring_sale');
      const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
      await postWebhook(server, statusWebhook([metaStatus(providerMessageId, 'delivered', id, { pricing: metaPricing('marketing') })]));
      await until('the message charged', async () => (await server.call('GET', `/v1/messages/${id}`, { key })).body.cost ?? undefined);

      // Meta's day starts at midnight in the WABA's time zone (here UTC−8): filed under today.
      const start = Math.floor((today + 8 * 3_600_000) / 1000);
      const end = start + 86_400;
      fake.pricing.set(FAKE_WABA_ID, [
        { start, end, country: 'BR', pricing_type: 'REGULAR', pricing_category: 'MARKETING', volume: 1, cost: 0.0625, tier: '0:MAX' },
        { start, end, country: 'IN', pricing_type: 'REGULAR', pricing_category: 'UTILITY', volume: 2, cost: 0.0028, tier: '0:1000000' },
        { start, end, country: 'BR', pricing_type: 'FREE_CUSTOMER_SERVICE', pricing_category: 'SERVICE', volume: 4, cost: 0 },
      ]);
      await job.runOnce(today + DAY + 3_600_000);

      const asked = fake.of('pricing_analytics').at(-1)!;
      assert.equal(asked.path, `/${fake.apiVersion}/${FAKE_WABA_ID}`);
      const fields = asked.query.get('fields')!;
      assert.match(fields, new RegExp(`^pricing_analytics\\.start\\(${(today - 2 * DAY) / 1000}\\)\\.end\\(${(today + DAY) / 1000}\\)\\.granularity\\(DAILY\\)`));
      assert.match(fields, /\.dimensions\(PRICING_CATEGORY,PRICING_TYPE,COUNTRY\)/);

      const reply = await server.call('GET', `/v1/analytics/cost/reconciliation?${range}`, { key });
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.length, 3, 'the three whole days before the run');
      const [first, second, last] = reply.body;
      for (const quiet of [first, second]) {
        assert.equal(quiet.matches, true);
        assert.deepEqual([quiet.meta.messages, quiet.svc.messages], [0, 0]);
      }
      assert.equal(last.day, new Date(today).toISOString());
      assert.equal(last.currency, 'USD');
      assert.deepEqual(last.meta, { messages: 3, amount: 0.0653 });
      assert.deepEqual(last.svc, { messages: 1, amount: 0.0625 });
      assert.equal(last.matches, false);
      assert.deepEqual(last.differences, [
        { category: 'utility', country: 'IN', metaMessages: 2, svcMessages: 0, metaAmount: 0.0028, svcAmount: 0 },
      ]);
      const counted = await metrics.getSingleMetricAsString('svc_cost_reconciliation_days_total');
      assert.match(counted, /result="match"} 2/);
      assert.match(counted, /result="differ"} 1/);

      // Another project sees none of it.
      const other = await server.createProject('Other');
      assert.deepEqual((await server.call('GET', `/v1/analytics/cost/reconciliation?${range}`, { key: other.key })).body, []);

      // Meta agrees once its figures do: the day is checked again and replaced.
      fake.pricing.set(FAKE_WABA_ID, [{ start, end, country: 'BR', pricing_type: 'REGULAR', pricing_category: 'MARKETING', volume: 1, cost: 0.0625 }]);
      await job.runOnce(today + DAY + 7 * 3_600_000 + 1);
      const again = (await server.call('GET', `/v1/analytics/cost/reconciliation?${range}`, { key })).body;
      assert.equal(again.at(-1).matches, true);
      assert.deepEqual(again.at(-1).differences, []);
    });

    it('records nothing when Meta cannot be asked, and says so in the metric', async () => {
      fake.failNext('pricing_analytics', graphError(500, 2, 'Service temporarily unavailable', 'try later'));
      const before = (await server.call('GET', `/v1/analytics/cost/reconciliation?${range}`, { key })).body;
      await job.runOnce(today + 10 * DAY);
      const afterwards = (await server.call('GET', `/v1/analytics/cost/reconciliation?${range}`, { key })).body;
      assert.deepEqual(afterwards, before);
      assert.match(await metrics.getSingleMetricAsString('svc_cost_reconciliation_days_total'), /result="unavailable"} 1/);
    });

    it('follows Meta’s paging of a long answer to its last page, with svc’s own token and Graph URL', async () => {
      const at = today + 20 * DAY + 3_600_000;
      const day = today + 19 * DAY;
      const start = Math.floor(day / 1000);
      // Seven countries' points of one day, two to a page: four pages.
      const countries = ['BR', 'IN', 'MX', 'AR', 'CO', 'PE', 'CL'];
      fake.pricing.set(
        FAKE_WABA_ID,
        countries.map((country) => ({ start, end: start + 86_400, country, pricing_type: 'REGULAR' as const, pricing_category: 'MARKETING', volume: 1, cost: 0.05 })),
      );
      fake.pricingPageSize = 2;
      try {
        const asked = fake.of('pricing_analytics').length;
        await job.runOnce(at);
        const pages = fake.of('pricing_analytics').slice(asked);
        assert.equal(pages.length, 4, 'every page, and no more');
        for (const page of pages.slice(1)) {
          assert.ok(page.query.get('after'), 'the next page by its cursor');
          assert.equal(page.query.get('access_token'), null, 'the link’s token is not svc’s to send');
          assert.equal(page.authorization, `Bearer ${'EAAG-first-token'}`);
        }
        const days = (await server.call('GET', `/v1/analytics/cost/reconciliation?from=${new Date(day).toISOString()}&to=${new Date(day + DAY).toISOString()}`, { key })).body;
        assert.deepEqual(days[0].meta, { messages: 7, amount: 0.35 }, 'all seven points counted');
      } finally {
        fake.pricingPageSize = 1000;
      }
    });

    it('runs once per interval across worker processes, and is taken over when its holder dies', async () => {
      const [a, b] = [aProcessJob(), aProcessJob()];
      const t = today + 40 * DAY;
      const asked = () => fake.of('pricing_analytics').length;
      const before = asked();
      await a.runOnce(t);
      assert.equal(asked(), before + 1, 'the first process due runs it');
      await b.runOnce(t);
      await b.runOnce(t + 3_600_000);
      await a.runOnce(t + 3_600_000);
      assert.equal(asked(), before + 1, 'nobody again within the interval');
      await b.runOnce(t + 6 * 3_600_000);
      await a.runOnce(t + 6 * 3_600_000);
      assert.equal(asked(), before + 2, 'one run the next interval, by whichever process came first');

      // A process takes the next run and dies in it: the others wait for its lease, then take over.
      const died = t + 12 * 3_600_000;
      assert.equal(await takeJobLease(server.app.database.db, 'cost_reconciliation', 'a-dead-process', died, 30 * 60_000), true);
      await a.runOnce(died);
      await b.runOnce(died + 10 * 60_000);
      assert.equal(asked(), before + 2, 'not while its lease lasts');
      await b.runOnce(died + 31 * 60_000);
      assert.equal(asked(), before + 3, 'taken over once it ran out');
    });

    it('compares Meta’s cost with svc’s counters in the WABA’s own currency', async () => {
      fake.currencies.set(FAKE_WABA_ID, 'EUR');
      try {
        // The hourly refresh of the account's facts reads it again; the reconciliation then uses it.
        const { database, provider, logger } = server.app;
        const refresh = createProviderAccountJob({ database, provider, logger, encryptionKey: Buffer.from(TEST_ENCRYPTION_KEY, 'base64') });
        await refresh.runOnce(today + 59 * DAY);
        const row = await database.db.selectFrom('provider_accounts').select('currency').executeTakeFirst();
        assert.equal(row?.currency, 'EUR');
        const t = today + 60 * DAY;
        await aProcessJob().runOnce(t);
        const days = (await server.call('GET', `/v1/analytics/cost/reconciliation?from=${new Date(t - 3 * DAY).toISOString()}&to=${new Date(t).toISOString()}`, { key })).body;
        assert.equal(days.length, 3);
        for (const day of days) assert.equal(day.currency, 'EUR');
      } finally {
        fake.currencies.delete(FAKE_WABA_ID);
      }
    });
  });
}
