import type { Db } from './database.ts';
import type { VolumeTiersTable } from './tables.ts';

// The volume tiers WABAs reached (Meta's account_update VOLUME_BASED_PRICING_TIER_UPDATE), read
// when a delivered message is priced. Every query names a WABA and a month: the primary key's
// prefix, so a lookup reads that month's few rows whatever the table's size.

export type VolumeTierRow = VolumeTiersTable;

/** How many months back a tier is kept: a month's messages may still be re-priced a little later. */
const KEPT_MONTHS = 13;

function monthsBefore(month: string, count: number): string {
  const [year, number] = month.split('-').map(Number) as [number, number];
  const index = year * 12 + (number - 1) - count;
  return `${String(Math.floor(index / 12)).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`;
}

/**
 * Records that a WABA reached a tier. A repeat changes nothing, except that an earlier
 * `effective_from` wins (Meta: of notifications describing one tier switch, the one with the
 * smaller tier_update_time is the official one). A lower tier reported later is kept beside the
 * higher one and never replaces it: pricing takes the highest tier in force.
 */
export async function recordVolumeTier(db: Db, row: VolumeTierRow): Promise<'applied' | 'unchanged'> {
  const { business_account_id, month, market, category, tier } = row;
  return db.transaction().execute(async (trx) => {
    const earlier = await trx
      .updateTable('volume_tiers')
      .set({ effective_from: row.effective_from, received_at: row.received_at })
      .where('business_account_id', '=', business_account_id)
      .where('month', '=', month)
      .where('market', '=', market)
      .where('category', '=', category)
      .where('tier', '=', tier)
      .where('effective_from', '>', row.effective_from)
      .executeTakeFirst();
    if (Number(earlier.numUpdatedRows) > 0) return 'applied';
    const existing = await trx
      .selectFrom('volume_tiers')
      .select('tier')
      .where('business_account_id', '=', business_account_id)
      .where('month', '=', month)
      .where('market', '=', market)
      .where('category', '=', category)
      .where('tier', '=', tier)
      .executeTakeFirst();
    if (existing) return 'unchanged';
    await trx
      .insertInto('volume_tiers')
      .values(row)
      .onConflict((conflict) => conflict.columns(['business_account_id', 'month', 'market', 'category', 'tier']).doNothing())
      .execute();
    // The WABA's tiers of long-past months are of no use any more.
    await trx
      .deleteFrom('volume_tiers')
      .where('business_account_id', '=', row.business_account_id)
      .where('month', '<', monthsBefore(row.month, KEPT_MONTHS))
      .execute();
    return 'applied';
  });
}

/** How a project's delivered message is priced: its WABA's currency (null: unknown) and volume tiers in force. */
export interface PricingAccount {
  currency: string | null;
  /** `market|category` → `LOWER:UPPER`. */
  tiers: Map<string, string>;
}

/**
 * The currency of the WABA a project sends through (its provider account) and the tiers in force
 * for it at `at`, `market|category` → `LOWER:UPPER`: of the tiers of `at`'s UTC month effective
 * by then, the highest. One statement: the project's account row by its key, then that WABA's
 * month by the primary key's prefix.
 */
export async function pricingAccountOfProjectAt(db: Db, projectId: string, at: number): Promise<PricingAccount> {
  const month = new Date(at).toISOString().slice(0, 7);
  const rows = await db
    .selectFrom('provider_accounts')
    .leftJoin('volume_tiers', (join) =>
      join
        .onRef('volume_tiers.business_account_id', '=', 'provider_accounts.business_account_id')
        .on('volume_tiers.month', '=', month)
        .on('volume_tiers.effective_from', '<=', at),
    )
    .select(['provider_accounts.currency', 'volume_tiers.market', 'volume_tiers.category', 'volume_tiers.tier', 'volume_tiers.tier_lower'])
    .where('provider_accounts.project_id', '=', projectId)
    .execute();
  const highest = new Map<string, { tier: string; lower: number }>();
  for (const row of rows) {
    if (row.tier === null || row.market === null || row.category === null) continue;
    const key = `${row.market}|${row.category}`;
    const lower = Number(row.tier_lower);
    const known = highest.get(key);
    if (!known || lower > known.lower) highest.set(key, { tier: row.tier, lower });
  }
  return { currency: rows[0]?.currency ?? null, tiers: new Map([...highest].map(([key, { tier }]) => [key, tier])) };
}
