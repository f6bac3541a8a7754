import { isKnownBusinessAccount } from '../db/providerAccounts.ts';
import { recordVolumeTier } from '../db/volumeTiers.ts';
import type { ProviderReport, ReportResult } from '../providers/provider.ts';
import type { ReportDeps } from '../workers/deps.ts';

// Meta's volume tiers: when a WABA's portfolio reaches a tier for a market and pricing category
// in a month, its messages delivered from then on in that month are priced at the tier's rate
// (charges.ts, by the rate card's line for that tier). Kept per WABA, as Meta reports them.

type VolumeTierReport = Extract<ProviderReport, { kind: 'volume_tier' }>;

/** Records a tier reached by a WABA some project here sends through; others (another deployment's) change nothing. */
export async function applyVolumeTier(deps: ReportDeps, report: VolumeTierReport): Promise<ReportResult> {
  const { db } = deps.database;
  if (!(await isKnownBusinessAccount(db, report.businessAccountId))) return 'unchanged';
  const result = await recordVolumeTier(db, {
    business_account_id: report.businessAccountId,
    month: report.month,
    market: report.market,
    category: report.category,
    tier: report.tier,
    tier_lower: report.tierLower,
    effective_from: report.effectiveFrom,
    received_at: Date.now(),
  });
  const fields = { businessAccountId: report.businessAccountId, market: report.market, category: report.category, tier: report.tier, month: report.month };
  if (result === 'applied') deps.logger.info(fields, 'volume tier reported');
  return result;
}
