import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { loadRateCard } from '../../src/costs/loadRateCard.ts';

// Rate cards as Meta publishes them (Pricing → "Rate cards and volume tiers": per currency, a
// rates CSV — title lines, then Market,Currency,Marketing,Utility,Authentication,
// "Authentication-\nInternational",Service and a row per market — and a volume-tiers CSV), read
// as they come beside svc's own one-rate-per-line layout. The fixtures are written for these
// tests in that layout (illustrative rates, not Meta's prices).

const FIXTURES = fileURLToPath(new URL('./fixtures/meta/', import.meta.url));
const OCT = Date.parse('2026-10-15T00:00:00Z');

function load(setting: string) {
  return loadRateCard(loadConfig({ SVC_RATE_CARD: setting }).cost).card;
}

// Every scratch folder goes when the file's tests are done.
const folders: string[] = [];
after(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));
function scratchFolder(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  folders.push(folder);
  return folder;
}

function scratch(name: string, text: string): string {
  const path = join(scratchFolder('svc-meta-card-'), name);
  writeFileSync(path, text);
  return path;
}

describe('a rate card in Meta’s layout', () => {
  it('reads a directory of Meta’s files: one currency per file, the date from the title or the file name', () => {
    const card = load(FIXTURES);
    const rate = (currency: string, market: string, category: string, tier?: string) =>
      card.rate({ currency, market, category, at: OCT, ...(tier && { tier }) });
    // EUR: the date and currency from the title line; the multi-line header column read as one.
    assert.equal(rate('EUR', 'Brazil', 'marketing')?.micros, 54_000);
    assert.equal(rate('EUR', 'India', 'authentication_international')?.micros, 24_200);
    assert.equal(rate('EUR', 'Other', 'service')?.micros, 6_600);
    assert.equal(rate('EUR', 'Brazil', 'authentication_international'), undefined, 'n/a is no rate');
    // USD: Meta's $US symbol, the date from the file name.
    assert.equal(rate('USD', 'Brazil', 'marketing')?.micros, 62_500);
    assert.equal(card.rate({ currency: 'USD', market: 'Brazil', category: 'marketing', at: Date.parse('2026-09-30T23:59:59Z') }), undefined);
    // The volume tiers replace India's EUR list rate for utility and authentication: the first band is the list rate.
    assert.deepEqual(rate('EUR', 'India', 'utility'), { lower: 0, tier: '0:1000000', micros: 1_200 });
    assert.equal(rate('EUR', 'India', 'utility', '1000001:5000000')?.micros, 1_100);
    assert.equal(rate('EUR', 'India', 'utility', '5000001:MAX')?.micros, 1_000);
    assert.equal(rate('EUR', 'India', 'authentication', '5000001:MAX')?.tier, '0:1000000', 'a band the market lacks: the list rate');
    // A market-category the tier file leaves alone keeps its list rate.
    assert.deepEqual(rate('EUR', 'India', 'marketing'), { lower: 0, tier: '0:MAX', micros: 10_200 });
  });

  it('takes a comma-separated list of files, Meta’s beside svc’s own layout', () => {
    const own = scratch('extra.csv', 'effective_date,currency,market,category,tier,rate\n2027-01-01,EUR,Brazil,marketing,,0.0550\n');
    const card = load(`${join(FIXTURES, 'rates-eur.csv')}, ${own}`);
    assert.equal(card.rate({ currency: 'EUR', market: 'Brazil', category: 'marketing', at: OCT })?.micros, 54_000);
    assert.equal(card.rate({ currency: 'EUR', market: 'Brazil', category: 'marketing', at: Date.parse('2027-02-01') })?.micros, 55_000);
    assert.equal(card.rate({ currency: 'USD', market: 'Brazil', category: 'marketing', at: OCT }), undefined, 'only the files named');
  });

  it('stops the start with a message naming the file and what is wrong', () => {
    const refused = (setting: string, pattern: RegExp) =>
      assert.throws(() => load(setting), (e: unknown) => e instanceof ConfigError && pattern.test(e.message), pattern.source);
    // No effective date anywhere: neither in the title lines nor in the name.
    const undated = scratch('rates-gbp.csv', '"Cost per message in GBP",,,\nMarket,Currency,Marketing,Utility\nBrazil,GBP,0.05,0.005\n');
    refused(undated, /rates-gbp\.csv: the date these rates take effect/);
    // A rate that is not a number, named by file and line (the multi-line header counts two).
    const bad = scratch('rates-eur-2026-10-01.csv', 'Title,,\nMarket,Currency,Marketing,"Authentication-\nInternational"\nBrazil,EUR,cheap,n/a\n');
    refused(bad, /rates-eur-2026-10-01\.csv, line 4: rate must be/);
    // A header svc does not know.
    refused(scratch('prices.csv', 'country,price\nBrazil,0.05\n'), /prices\.csv: not a rate card svc can read/);
    // No currency to tell.
    refused(scratch('rates-2026-10-01.csv', 'Market,Marketing\nBrazil,0.05\n'), /line 2: no currency/);
    // The same rate twice (the same file named twice).
    const twice = join(FIXTURES, 'rates-usd-2026-10-01.csv');
    refused(`${twice},${twice}`, /a second rate for 2026-10-01, USD, Brazil, marketing/);
    // A directory without a card.
    refused(scratchFolder('svc-empty-card-'), /has no \.csv file/);
  });
});
