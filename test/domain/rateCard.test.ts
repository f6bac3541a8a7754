import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { EXAMPLE_RATE_CARD_PATH } from '../../src/costs/loadRateCard.ts';
import { countryOfRecipient, marketCandidates } from '../../src/domain/pricingMarkets.ts';
import { fromMicros, RateCard, RateCardError, toMicros } from '../../src/domain/rateCard.ts';

const at = (date: string) => Date.parse(`${date}T12:00:00.000Z`);
const regular = (category: string) => ({ billable: true, pricingModel: 'PMP', category, type: 'regular' });

const CARD = `# a comment
effective_date,currency,market,category,tier,rate
2026-10-01,USD,North America,marketing,0:MAX,0.0250
2026-10-01,USD,India,utility,0:1000000,0.0014
2026-10-01,USD,India,utility,1000001:MAX,0.0012
2026-10-01,USD,India,authentication_international,,0.0280
2026-10-01,USD,Rest of Asia Pacific,marketing,0:MAX,0.0732
2026-10-01,USD,Other,marketing,0:MAX,0.0604
2026-10-01,EUR,North America,marketing,0:MAX,0.0230
2027-01-01,USD,North America,marketing,0:MAX,0.0200
2027-01-01,USD,Bangladesh,marketing,0:MAX,"0.0100"
`;

describe('the rate card', () => {
  const card = RateCard.parse(CARD, 'test card');

  it('prices a delivered message by currency, market, category and effective date', () => {
    const us = { recipient: '+14155550101', currency: 'USD' };
    assert.deepEqual(card.chargeOf({ ...us, pricing: regular('marketing'), at: at('2026-12-31') }), {
      kind: 'charged', micros: 25_000, currency: 'USD', market: 'North America', country: 'US', category: 'marketing', tier: '0:MAX',
    });
    // From the next version's date on, its rate.
    assert.equal(card.rate({ currency: 'USD', market: 'North America', category: 'marketing', at: Date.parse('2027-01-01T00:00:00Z') })?.micros, 20_000);
    assert.equal(card.rate({ currency: 'USD', market: 'North America', category: 'marketing', at: Date.parse('2026-09-30T23:59:59Z') }), undefined);
    assert.equal(card.chargeOf({ ...us, currency: 'EUR', pricing: regular('marketing'), at: at('2026-12-01') }).kind, 'charged');
    // The list rate (first tier) unless Meta named the tier in force.
    assert.equal(card.rate({ currency: 'USD', market: 'India', category: 'utility', at: at('2026-11-01') })?.micros, 1_400);
    assert.equal(card.rate({ currency: 'USD', market: 'India', category: 'utility', at: at('2026-11-01'), tier: '1000001:MAX' })?.micros, 1_200);
    // A message priced with its WABA's tiers (market|category → tier): the named tier's rate for
    // that market and category only; a tier the card lacks falls back to the first tier.
    const india = { recipient: '+919876543210', currency: 'USD', pricing: regular('utility'), at: at('2026-11-01') };
    const micros = (charge: ReturnType<RateCard['chargeOf']>) => (charge.kind === 'charged' ? [charge.micros, charge.tier] : charge.kind);
    assert.deepEqual(micros(card.chargeOf({ ...india, tiers: new Map([['India|utility', '1000001:MAX']]) })), [1_200, '1000001:MAX']);
    assert.deepEqual(micros(card.chargeOf({ ...india, tiers: new Map([['India|marketing', '1000001:MAX']]) })), [1_400, '0:1000000']);
    assert.deepEqual(micros(card.chargeOf({ ...india, tiers: new Map([['India|utility', '25000001:50000000']]) })), [1_400, '0:1000000']);
    assert.deepEqual(micros(card.chargeOf({ ...india, tiers: new Map() })), [1_400, '0:1000000']);
    // Meta's hyphenated category is the card's underscored one.
    const otp = card.chargeOf({ recipient: '+919876543210', currency: 'USD', pricing: regular('authentication-international'), at: at('2026-11-01') });
    assert.equal(otp.kind === 'charged' && otp.micros, 28_000);
  });

  it('finds the market: the country when the card lists it, else its region, else Other', () => {
    const bd = { recipient: '+8801712345678', currency: 'USD', pricing: regular('marketing') };
    assert.equal(card.chargeOf({ ...bd, at: at('2026-12-01') }).market, 'Rest of Asia Pacific');
    assert.equal(card.chargeOf({ ...bd, at: at('2027-02-01') }).market, 'Bangladesh');
    assert.equal(card.chargeOf({ recipient: '+201001234567', currency: 'USD', pricing: regular('marketing'), at: at('2026-12-01') }).market, 'Other');
    assert.equal(countryOfRecipient('+18095551234'), 'DO', '+1 809 is the Dominican Republic (Rest of Latin America)');
    assert.equal(countryOfRecipient('+15550000001'), 'US', 'a fictional +1 555 number counts as North America');
    assert.equal(countryOfRecipient('US.13491208655302741918'), undefined, 'a BSUID has no country');
    assert.deepEqual(marketCandidates('DO'), ['Dominican Republic', 'Rest of Latin America', 'Other']);
    assert.deepEqual(marketCandidates('TR'), ['Turkey', 'Other']);
  });

  it('charges nothing for a free message, and says when it has no rate', () => {
    const free = card.chargeOf({ recipient: '+14155550101', currency: 'USD', pricing: { ...regular('utility'), billable: false, type: 'free_customer_service' }, at: at('2026-12-01') });
    assert.deepEqual(free, { kind: 'free', currency: 'USD', market: 'North America', country: 'US', category: 'utility' });
    const unknown = card.chargeOf({ recipient: '+14155550101', currency: 'USD', pricing: regular('utility'), at: at('2026-12-01') });
    assert.equal(unknown.kind, 'unpriced');
    assert.equal(card.chargeOf({ recipient: 'US.1349120865530274191', currency: 'USD', pricing: regular('marketing'), at: at('2026-12-01') }).kind, 'unpriced');
    // marketing_lite (Marketing Messages API) at the marketing rate when the card has no line of its own.
    const lite = card.chargeOf({ recipient: '+14155550101', currency: 'USD', pricing: regular('marketing_lite'), at: at('2026-12-01') });
    assert.equal(lite.kind === 'charged' && lite.micros, 25_000);
  });

  it('keeps amounts exact in millionths', () => {
    assert.equal(toMicros('0.0118'), 11_800);
    assert.equal(toMicros('383.9'), 383_900_000);
    assert.equal(fromMicros(11_800 * 3), 0.0354);
  });

  it('refuses a card with a mistake, naming its line', () => {
    const header = 'effective_date,currency,market,category,tier,rate\n';
    const cases: [string, RegExp][] = [
      ['', /empty/],
      [header, /no rates/],
      ['currency,market,category,rate\nUSD,India,marketing,0.1\n', /line 1: the header lacks the column effective_date/],
      [`${header}2026-13-01,USD,India,marketing,,0.01\n`, /line 2: effective_date/],
      [`${header}2026-10-01,usd$,India,marketing,,0.01\n`, /line 2: currency/],
      [`${header}2026-10-01,USD,,marketing,,0.01\n`, /line 2: market/],
      [`${header}2026-10-01,USD,India,marketing,10:5,0.01\n`, /line 2: tier/],
      [`${header}2026-10-01,USD,India,marketing,,-0.01\n`, /line 2: rate/],
      [`${header}2026-10-01,USD,India,marketing,,0.0000001\n`, /line 2: rate/],
      [`${header}2026-10-01,USD,India,marketing,,0.01\n2026-10-01,USD,India,marketing,0:MAX,0.02\n`, /line 3: a second rate/],
    ];
    for (const [text, message] of cases) assert.throws(() => RateCard.parse(text), (error: unknown) => error instanceof RateCardError && message.test(error.message), text);
  });

  it('bundles an example card that parses and says it is an example', () => {
    const text = readFileSync(EXAMPLE_RATE_CARD_PATH, 'utf8');
    assert.match(text, /EXAMPLE RATE CARD — NOT META'S PRICES/);
    const example = RateCard.parse(text);
    assert.ok(example.lines > 20);
  });
});
