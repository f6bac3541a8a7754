import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { insertProject } from '../../src/db/projects.ts';
import { pricingAccountOfProjectAt, recordVolumeTier, type VolumeTierRow } from '../../src/db/volumeTiers.ts';
import { MAX_CLOCK_SKEW_MS } from '../../src/domain/reportedTime.ts';
import { reportsOf } from '../../src/providers/whatsapp/webhook.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';
import { describePlan, explainingDb, planNodes } from '../support/queryPlans.ts';

// The volume tiers store: what a WABA reached, when it applies, which tier prices a delivery at a
// given time, how long rows live, and the plans of its statements on a big table.

const at = (iso: string) => Date.parse(iso);

function tier(waba: string, month: string, tierText: string, effectiveFrom: number, extra: Partial<VolumeTierRow> = {}): VolumeTierRow {
  return {
    business_account_id: waba,
    month,
    market: 'India',
    category: 'utility',
    tier: tierText,
    tier_lower: Number(tierText.split(':')[0]),
    effective_from: effectiveFrom,
    received_at: effectiveFrom,
    ...extra,
  };
}

async function projectOnWaba(db: Db, projectId: string, waba: string): Promise<void> {
  await insertProject(db, testProjectRow(projectId));
  await db
    .insertInto('provider_accounts')
    .values({ project_id: projectId, credentials_updated_at: 0, business_account_id: waba, webhooks_subscribed: 1, check_due_at: 0 })
    .execute();
}

describe('the account_update tier webhook, parsed as Meta documents it', () => {
  const now = at('2026-11-20T12:00:00Z');
  const webhook = (info: unknown, event = 'VOLUME_BASED_PRICING_TIER_UPDATE') => ({
    object: 'whatsapp_business_account',
    entry: [{ id: '102290129340398', time: 1743451903, changes: [{ value: { volume_tier_info: info, event }, field: 'account_update' }] }],
  });

  it('reads volume_tier_info: applies from tier_update_time, never before its effective month', () => {
    // Meta's own example (pricing page, webhooks reference): reached in March, effective in November.
    const example = { tier_update_time: 1743451903, pricing_category: 'UTILITY', tier: '25000001:50000000', effective_month: '2025-11', region: 'India' };
    assert.deepEqual(reportsOf(webhook(example), now).volumeTiers, [
      {
        businessAccountId: '102290129340398',
        market: 'India',
        category: 'utility',
        tier: '25000001:50000000',
        tierLower: 25_000_001,
        month: '2025-11',
        effectiveFrom: at('2025-11-01T00:00:00Z'),
      },
    ]);
    const midMonth = { ...example, tier: '1000001:max', effective_month: '2026-11', tier_update_time: now / 1000 - 3600 };
    const [update] = reportsOf(webhook(midMonth), now).volumeTiers;
    assert.equal(update!.effectiveFrom, now - 3_600_000);
    assert.equal(update!.tier, '1000001:MAX');
    // A time in the future is taken as now (give or take the clock skew allowed).
    assert.equal(reportsOf(webhook({ ...midMonth, tier_update_time: now / 1000 + 86_400 }), now).volumeTiers[0]!.effectiveFrom, now + MAX_CLOCK_SKEW_MS);
  });

  it('skips other account events and malformed tiers', () => {
    const good = { tier_update_time: 1763600000, pricing_category: 'AUTHENTICATION', tier: '0:1000000', effective_month: '2026-11', region: 'Rest of Latin America' };
    assert.equal(reportsOf(webhook(good), now).volumeTiers.length, 1);
    for (const bad of [
      webhook(good, 'ACCOUNT_VIOLATION'),
      webhook({ ...good, tier: '10:5' }),
      webhook({ ...good, tier: 1000000 }),
      webhook({ ...good, effective_month: '2027-03' }),
      webhook({ ...good, effective_month: '2026-1' }),
      webhook({ ...good, region: '' }),
      webhook({ ...good, region: 'India\u0000' }),
      webhook({ ...good, pricing_category: '' }),
      webhook(null),
      { ...webhook(good), object: 'page' },
    ]) {
      assert.deepEqual(reportsOf(bad, now).volumeTiers, [], JSON.stringify(bad));
    }
  });
});

for (const kind of databaseKinds()) {
  describe(`volume tiers in the database (${kind})`, () => {
    it('prices by the highest tier in force at the delivery, in its month only; repeats and late lower tiers change nothing', async () => {
      await withMigratedDatabase(kind, async ({ db }) => {
        await projectOnWaba(db, 'prj_a', 'waba-a');
        await projectOnWaba(db, 'prj_b', 'waba-b');
        await insertProject(db, testProjectRow('prj_none'));
        const reached = at('2026-11-10T08:00:00Z');
        assert.equal(await recordVolumeTier(db, tier('waba-a', '2026-11', '1000001:MAX', reached)), 'applied');
        // A repeat, and the same switch notified again with a later time: unchanged.
        assert.equal(await recordVolumeTier(db, tier('waba-a', '2026-11', '1000001:MAX', reached)), 'unchanged');
        assert.equal(await recordVolumeTier(db, tier('waba-a', '2026-11', '1000001:MAX', reached + 60_000)), 'unchanged');
        // The lower tier, reported late: kept, but the higher one prices.
        assert.equal(await recordVolumeTier(db, tier('waba-a', '2026-11', '0:1000000', at('2026-11-01T00:00:00Z'))), 'applied');
        const tiers = (projectId: string, when: string) => pricingAccountOfProjectAt(db, projectId, at(when)).then((account) => Object.fromEntries(account.tiers));
        assert.deepEqual(await tiers('prj_a', '2026-11-20T00:00:00Z'), { 'India|utility': '1000001:MAX' });
        assert.deepEqual(await tiers('prj_a', '2026-11-10T07:59:59Z'), { 'India|utility': '0:1000000' });
        assert.deepEqual(await tiers('prj_a', '2026-12-01T00:00:00Z'), {}, 'a new month starts from the first tier');
        assert.deepEqual(await tiers('prj_b', '2026-11-20T00:00:00Z'), {}, 'another WABA');
        assert.deepEqual(await tiers('prj_none', '2026-11-20T00:00:00Z'), {}, 'a project without credentials');
        // The same switch notified earlier than first heard: the earlier time is Meta's official one.
        assert.equal(await recordVolumeTier(db, tier('waba-a', '2026-11', '1000001:MAX', reached - 3_600_000)), 'applied');
        assert.deepEqual(await tiers('prj_a', '2026-11-10T07:30:00Z'), { 'India|utility': '1000001:MAX' });
      });
    });

    it('deletes a WABA’s tiers of months more than 13 months old as new ones arrive', async () => {
      await withMigratedDatabase(kind, async ({ db }) => {
        await recordVolumeTier(db, tier('waba-a', '2025-09', '0:1000000', at('2025-09-01T00:00:00Z')));
        await recordVolumeTier(db, tier('waba-a', '2025-10', '0:1000000', at('2025-10-01T00:00:00Z')));
        await recordVolumeTier(db, tier('waba-b', '2025-01', '0:1000000', at('2025-01-01T00:00:00Z')));
        await recordVolumeTier(db, tier('waba-a', '2026-11', '0:1000000', at('2026-11-01T00:00:00Z')));
        const rows = await db.selectFrom('volume_tiers').select(['business_account_id', 'month']).orderBy('business_account_id').orderBy('month').execute();
        // As plain objects: node:sqlite's rows have no prototype.
        assert.deepEqual(rows.map((row) => ({ ...row })), [
          { business_account_id: 'waba-a', month: '2025-10' },
          { business_account_id: 'waba-a', month: '2026-11' },
          // Another WABA's rows wait for its own next tier.
          { business_account_id: 'waba-b', month: '2025-01' },
        ]);
      });
    });

    it('reads and writes a WABA’s month through the keys, on a big table', async () => {
      await withMigratedDatabase(kind, async (database) => {
        const { db } = database;
        // 2,000 WABAs (one project each) × 13 months × 4 markets × 2 categories × 2 tiers ≈ 416,000 rows.
        for (let p = 0; p < 2_000; p += 500) {
          await db.insertInto('projects').values(Array.from({ length: 500 }, (_, i) => testProjectRow(`prj_${p + i}`))).execute();
          await db
            .insertInto('provider_accounts')
            .values(Array.from({ length: 500 }, (_, i) => ({ project_id: `prj_${p + i}`, credentials_updated_at: 0, business_account_id: `waba-${p + i}`, webhooks_subscribed: 1, check_due_at: 0 })))
            .execute();
        }
        await sql`insert into volume_tiers (business_account_id, month, market, category, tier, tier_lower, effective_from, received_at)
          select pa.business_account_id, m.month, k.market, c.category, t.tier, t.lower, 0, 0
          from provider_accounts pa
          cross join (select '2025-11' as month union all select '2025-12' union all select '2026-01' union all select '2026-02'
            union all select '2026-03' union all select '2026-04' union all select '2026-05' union all select '2026-06' union all select '2026-07'
            union all select '2026-08' union all select '2026-09' union all select '2026-10' union all select '2026-11') m
          cross join (select 'India' as market union all select 'Brazil' union all select 'Indonesia' union all select 'Other') k
          cross join (select 'utility' as category union all select 'authentication') c
          cross join (select '0:1000000' as tier, 0 as lower union all select '1000001:MAX', 1000001) t`.execute(db);
        if (kind === 'postgres') {
          await sql`analyze volume_tiers`.execute(db);
          await sql`analyze provider_accounts`.execute(db);
        }
        const explaining = explainingDb(database);
        try {
          await pricingAccountOfProjectAt(explaining.db, 'prj_1234', at('2026-11-20T00:00:00Z'));
          await recordVolumeTier(explaining.db, tier('waba-1234', '2026-11', '1000001:MAX', 0));
          const plans = explaining.take();
          assert.ok(plans.length >= 4, `the read, and the write's statements: ${plans.map((p) => p.sql).join('\n')}`);
          for (const plan of plans) {
            const description = `${plan.sql}\n  plan: ${describePlan(plan.plan)}`;
            if (/^\s*insert/i.test(plan.sql)) continue;
            if (Array.isArray(plan.plan)) {
              const reads = plan.plan.filter((line) => /^(SEARCH|SCAN) /.test(line));
              assert.ok(reads.length > 0, description);
              for (const line of reads) assert.ok(line.startsWith('SEARCH'), `no scan: ${description}`);
              assert.ok(
                plan.plan.some((line) => /^SEARCH (volume_tiers|"volume_tiers") .*\(business_account_id=\?/.test(line)),
                `volume_tiers by the WABA's key: ${description}`,
              );
            } else {
              const nodes = planNodes(plan.plan);
              assert.ok(!nodes.some((node) => node['Node Type'] === 'Seq Scan'), `no sequential scan: ${description}`);
              const tiersRead = nodes.filter((node) => node['Relation Name'] === 'volume_tiers' && /Scan/.test(node['Node Type']));
              assert.ok(tiersRead.length > 0, description);
              for (const node of tiersRead) {
                const index = node['Node Type'] === 'Bitmap Heap Scan' ? planNodes(node).find((n) => n['Node Type'] === 'Bitmap Index Scan') : node;
                assert.equal(index?.['Index Name'], 'volume_tiers_pk', description);
                assert.match(index?.['Index Cond'] ?? '', /business_account_id/, description);
              }
            }
          }
        } finally {
          await explaining.close();
        }
      });
    });
  });
}
