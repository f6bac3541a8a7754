import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { loadRateCard } from '../../src/costs/loadRateCard.ts';

// The operator's rate card and currency, as the environment names them: checked at start.

// Every scratch folder goes when the file's tests are done.
const folders: string[] = [];
after(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));
function scratchFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'svc-rate-card-'));
  folders.push(folder);
  return folder;
}

describe('cost settings', () => {
  it('default to the bundled example card in USD, reconciled every 6 hours', () => {
    const { cost } = loadConfig({});
    assert.deepEqual(cost, { rateCardPath: undefined, currency: 'USD', reconcileIntervalMs: 6 * 3_600_000 });
    const loaded = loadRateCard(cost);
    assert.equal(loaded.example, true);
    assert.ok(loaded.card.lines > 0);
  });

  it('read the operator’s card, currency and interval', () => {
    const dir = scratchFolder();
    const path = join(dir, 'card.csv');
    writeFileSync(path, 'effective_date,currency,market,category,tier,rate\n2026-10-01,EUR,India,marketing,,0.0108\n');
    const { cost } = loadConfig({ SVC_RATE_CARD: path, SVC_RATE_CARD_CURRENCY: 'eur', SVC_COST_RECONCILE_INTERVAL: 'off' });
    assert.deepEqual(cost, { rateCardPath: path, currency: 'EUR', reconcileIntervalMs: 0 });
    const loaded = loadRateCard(cost);
    assert.equal(loaded.example, false);
    assert.equal(loaded.card.rate({ currency: 'EUR', market: 'India', category: 'marketing', at: Date.parse('2026-11-01') })?.micros, 10_800);
  });

  it('stop the start with a message naming what is wrong', () => {
    assert.throws(() => loadConfig({ SVC_RATE_CARD_CURRENCY: 'dollars' }), (e: unknown) => e instanceof ConfigError && /SVC_RATE_CARD_CURRENCY/.test(e.message));
    assert.throws(() => loadConfig({ SVC_COST_RECONCILE_INTERVAL: '1s' }), (e: unknown) => e instanceof ConfigError && /SVC_COST_RECONCILE_INTERVAL/.test(e.message));
    const dir = scratchFolder();
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'effective_date,currency,market,category,tier,rate\n2026-10-01,USD,India,marketing,,cheap\n');
    const config = { rateCardPath: bad, currency: 'USD', reconcileIntervalMs: 0 };
    assert.throws(() => loadRateCard(config), (e: unknown) => e instanceof ConfigError && /bad\.csv, line 2: rate/.test(e.message));
    assert.throws(
      () => loadRateCard({ ...config, rateCardPath: join(dir, 'missing.csv') }),
      (e: unknown) => e instanceof ConfigError && /cannot read .*missing\.csv \(ENOENT\)/.test(e.message),
    );
  });
});
