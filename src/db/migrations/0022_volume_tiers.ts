import type { Kysely } from 'kysely';

// Meta's volume tiers (README, "Cost"): each account_update VOLUME_BASED_PRICING_TIER_UPDATE
// webhook says a WABA reached a tier (`tier`, LOWER:UPPER messages in the month) for one market
// (`region`) and pricing category, in one month (`effective_month`). One row per WABA, month,
// market, category and tier reached, with the time from which it applies (the earliest
// notification's `tier_update_time`, not before the month's start: Meta names the earliest the
// official one). A message delivered that month is priced at the highest tier in force by its
// delivery. A few dozen rows per WABA and month at most; rows of months more than 13 months old
// are deleted whenever the WABA reaches a new tier (db/volumeTiers.ts), so the table stays small.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('volume_tiers')
    .addColumn('business_account_id', 'text', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('market', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('tier', 'text', (c) => c.notNull())
    .addColumn('tier_lower', 'bigint', (c) => c.notNull())
    .addColumn('effective_from', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('volume_tiers_pk', ['business_account_id', 'month', 'market', 'category', 'tier'])
    .execute();
}
