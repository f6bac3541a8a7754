import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// GET /v1/analytics/cost: what a month of sandbox messages cost, checked against a hand
// calculation from the bundled example rate card (src/costs/rate-card.example.csv), with the
// clock moved day by day so the month's messages are delivered on their own days.

const DAY = 86_400_000;
const FIRST_DAY = Date.parse('2026-12-17T00:00:00.000Z');
const DAYS = 31; // 17 Dec 2026 – 16 Jan 2027: across the card's 1 Jan 2027 update
const CARD_UPDATE = Date.parse('2027-01-01T00:00:00.000Z');

/** The example card's rates (millionths of a USD), copied by hand from the file. */
function rate(market: string, category: string, day: number): number {
  const updated = day >= CARD_UPDATE;
  const rates: Record<string, Record<string, number>> = {
    'North America': { marketing: 25_000, utility: updated ? 3_000 : 3_400 },
    India: { marketing: updated ? 12_500 : 11_800, utility: 1_400 },
    Brazil: { marketing: 62_500, utility: 6_800 },
    'United Kingdom': { marketing: 52_900, utility: 22_000 },
    'Rest of Latin America': { marketing: 74_000, utility: 11_300 },
  };
  return rates[market]![category]!;
}

const RECIPIENTS = [
  { to: '+14155550101', market: 'North America' },
  { to: '+919876543210', market: 'India' },
  { to: '+5511987654321', market: 'Brazil' },
  { to: '+447700900123', market: 'United Kingdom' },
  { to: '+18095551234', market: 'Rest of Latin America' }, // +1 809: the Dominican Republic
];
const TEMPLATES = [
  { name: 'spring_sale', category: 'MARKETING' },
  { name: 'order_update', category: 'UTILITY' },
];
/** The sandbox's recipient that is sent (and priced) but never delivered: never charged. */
const UNDELIVERABLE = '+15550000001';

async function approved(server: TestServer, key: string, name: string, category: string): Promise<void> {
  const created = await server.call('POST', '/v1/templates', {
    key,
    body: { name, language: 'en_US', category, components: [{ type: 'BODY', text: 'Hello {{1}}' }] },
  });
  assert.equal(created.status, 200, created.text);
  const reviewed = await server.call('POST', `/v1/test-helpers/templates/${created.body.id}/review`, { key, body: { status: 'APPROVED' } });
  assert.equal(reviewed.status, 200, reviewed.text);
}

const micros = (amount: number) => Math.round(amount * 1_000_000);

for (const kind of databaseKinds()) {
  describe(`cost analytics (${kind})`, () => {
    let server: TestServer;
    let key: string;
    let otherKey: string;
    /** Hand-calculated: millionths of a USD per day, per market, per category, per template. */
    const expected = { total: 0, charged: 0, byDay: new Map<number, number>(), byMarket: new Map<string, number>(), byCategory: new Map<string, number>() };
    const add = (map: Map<number | string, number>, k: number | string, v: number) => map.set(k, (map.get(k) ?? 0) + v);

    before(async () => {
      server = await startTestServer(kind, {
        env: { SVC_SANDBOX_DELIVERY_DELAY_MS: '0', SVC_SANDBOX_READ_DELAY_MS: '0' },
      });
      ({ key } = await server.createProject('Month'));
      ({ key: otherKey } = await server.createProject('Other'));
      const credentials = await server.call('PUT', '/v1/projects/me/provider-credentials', {
        key,
        body: { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-test-token' },
      });
      assert.equal(credentials.status, 200, credentials.text);
      for (const template of TEMPLATES) await approved(server, key, template.name, template.category);
    });
    after(async () => {
      mock.timers.reset();
      await server.close();
    });

    it('a sandbox month costs what a hand calculation from the rate card says', { timeout: 300_000 }, async () => {
      mock.timers.enable({ apis: ['Date'], now: FIRST_DAY });
      try {
        await aMonth();
      } finally {
        // Checked while the clock still says the month's last day: moving it back would leave the
        // key's rate-limit bucket in the future.
        mock.timers.reset();
      }
    });

    async function aMonth(): Promise<void> {
      let sent = 0;
      {
        for (let d = 0; d < DAYS; d++) {
          const day = FIRST_DAY + d * DAY;
          // Midday: whatever the clock, each day's messages are queued, sent and delivered that day.
          mock.timers.setTime(day + 12 * 3_600_000);
          const sends: Promise<unknown>[] = [];
          for (const [r, recipient] of RECIPIENTS.entries()) {
            for (const [t, template] of TEMPLATES.entries()) {
              // A different mix each day: 0 to 2 messages per recipient and template.
              const count = (d * 7 + r * 3 + t * 5) % 3;
              for (let i = 0; i < count; i++) {
                sends.push(
                  server.call('POST', '/v1/messages', {
                    key,
                    body: { to: recipient.to, template: template.name, language: 'en_US', variables: { '1': 'Ana' } },
                  }),
                );
                const cost = rate(recipient.market, template.category.toLowerCase(), day);
                expected.total += cost;
                expected.charged++;
                add(expected.byDay, day, cost);
                add(expected.byMarket, recipient.market, cost);
                add(expected.byCategory, template.category.toLowerCase(), cost);
              }
            }
          }
          if (d % 10 === 0) {
            sends.push(server.call('POST', '/v1/messages', { key, body: { to: UNDELIVERABLE, template: 'spring_sale', language: 'en_US', variables: { '1': 'Ana' } } }));
          }
          for (const reply of (await Promise.all(sends)) as { status: number; text: string }[]) assert.equal(reply.status, 202, reply.text);
          sent += sends.length;
          // Real time (performance.now), not the mocked Date, bounds the wait.
          const deadline = performance.now() + 60_000;
          for (;;) {
            const list = (await server.call('GET', '/v1/messages?limit=200', { key })).body as { status: string; to: string; queuedAt: string }[];
            if (list.length === Math.min(sent, 200) && list.every((m) => m.status === 'READ' || m.status === 'FAILED')) break;
            if (performance.now() > deadline) {
              assert.fail(`day ${d + 1}: not all delivered: ${JSON.stringify(list.filter((m) => m.status !== 'READ').map((m) => [m.status, m.to, m.queuedAt]))} (${sent} sent)`);
            }
            await new Promise((resolve) => setTimeout(resolve, 25));
            // The day's clock moves on (retries and reports fall due), still within the day.
            mock.timers.setTime(Math.min(Date.now() + 250, day + 23 * 3_600_000));
          }
        }
      }
      assert.ok(expected.charged > 250, `a month's worth of messages (${expected.charged})`);

      const range = `from=${new Date(FIRST_DAY).toISOString()}&to=${new Date(FIRST_DAY + DAYS * DAY).toISOString()}`;
      const byDay = await server.call('GET', `/v1/analytics/cost?${range}`, { key });
      assert.equal(byDay.status, 200, byDay.text);
      assert.deepEqual(byDay.body.groupBy, ['day']);
      assert.equal(byDay.body.totals.length, 1);
      const [total] = byDay.body.totals;
      assert.equal(total.currency, 'USD');
      assert.equal(micros(total.amount), expected.total, 'the month’s total, to the millionth');
      assert.equal(total.charged, expected.charged);
      assert.equal(total.unpriced, 0);
      assert.equal(byDay.body.groups.length, DAYS);
      for (const group of byDay.body.groups) assert.equal(micros(group.amount), expected.byDay.get(Date.parse(group.day)), group.day);

      const byMarket = await server.call('GET', `/v1/analytics/cost?${range}&groupBy=market`, { key });
      assert.deepEqual(
        Object.fromEntries(byMarket.body.groups.map((g: { market: string; amount: number }) => [g.market, micros(g.amount)])),
        Object.fromEntries(expected.byMarket),
      );
      const byCategory = await server.call('GET', `/v1/analytics/cost?${range}&groupBy=category,template`, { key });
      assert.deepEqual(
        byCategory.body.groups.map((g: { category: string; template: string; amount: number }) => [g.category, g.template, micros(g.amount)]),
        [
          ['marketing', 'spring_sale', expected.byCategory.get('marketing')],
          ['utility', 'order_update', expected.byCategory.get('utility')],
        ],
      );

      // Each message says what it cost; the undelivered one, nothing.
      const messages = (await server.call('GET', '/v1/messages?limit=200', { key })).body as any[];
      const failed = messages.filter((m) => m.status === 'FAILED');
      assert.ok(failed.length > 0);
      for (const m of failed) assert.equal(m.cost, null);
      const delivered = messages.find((m) => m.status === 'READ' && m.to === '+919876543210' && m.template === 'spring_sale');
      assert.deepEqual(delivered.cost, { amount: Date.parse(delivered.deliveredAt) >= CARD_UPDATE ? 0.0125 : 0.0118, currency: 'USD' });
      assert.deepEqual(delivered.pricing, { billable: true, pricingModel: 'PMP', category: 'marketing', type: 'regular' });

      // Another project's key sees none of it.
      const other = await server.call('GET', `/v1/analytics/cost?${range}`, { key: otherKey });
      assert.equal(other.status, 200);
      assert.deepEqual(other.body.totals, []);
      assert.deepEqual(other.body.groups, []);
    }

    it('refuses a bad range, an unknown grouping and a missing key', async () => {
      const { key } = await server.createProject('Errors');
      const bad = [
        ['from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z', 422, 'invalid_time_range'],
        ['from=2025-01-01T00:00:00Z&to=2026-12-01T00:00:00Z', 422, 'invalid_time_range'],
        ['from=yesterday&to=2026-12-01T00:00:00Z', 400, 'validation_failed'],
        ['from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z&groupBy=status', 400, 'validation_failed'],
        ['from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z&groupBy=day;drop table messages', 400, 'validation_failed'],
        ['from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z&projectId=x', 400, 'validation_failed'],
      ] as const;
      for (const [query, status, code] of bad) {
        const reply = await server.call('GET', `/v1/analytics/cost?${query}`, { key });
        assert.equal(reply.status, status, `${query}: ${reply.text}`);
        assert.equal(reply.body.code, code);
      }
      const anonymous = await server.call('GET', '/v1/analytics/cost?from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z');
      assert.equal(anonymous.status, 401);
      // The sandbox has no Meta to reconcile with: no days checked.
      const reconciliation = await server.call('GET', '/v1/analytics/cost/reconciliation?from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z', { key });
      assert.equal(reconciliation.status, 200, reconciliation.text);
      assert.deepEqual(reconciliation.body, []);
    });
  });
}
