import type { PricingAnalyticsPoint, PricingAnalyticsQuery, PricingAnalyticsResult } from '../provider.ts';
import type { GraphClient } from './client.ts';
import { graphFailureError, isGraphOutage } from './errors.ts';
import { whatsappCredentials } from './credentials.ts';

// Meta's own totals of what a WABA was charged (analytics docs, "Pricing analytics"):
// GET /{waba-id}?fields=pricing_analytics.start(S).end(E).granularity(DAILY).dimensions(…),
// one data point per day, country, pricing type and category, with `volume` (messages delivered)
// and `cost` (approximate, in the WABA's currency).

interface GraphPricingAnalytics {
  pricing_analytics?: { data?: Array<{ data_points?: unknown[] }> };
}

function pointOf(raw: unknown): PricingAnalyticsPoint | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const point = raw as Record<string, unknown>;
  const { start, end, volume, cost } = point;
  if (typeof start !== 'number' || typeof end !== 'number' || typeof volume !== 'number') return undefined;
  return {
    start: start * 1000,
    end: end * 1000,
    country: typeof point.country === 'string' ? point.country : '',
    pricingType: typeof point.pricing_type === 'string' ? point.pricing_type : '',
    pricingCategory: typeof point.pricing_category === 'string' ? point.pricing_category : '',
    volume,
    cost: typeof cost === 'number' ? cost : 0,
  };
}

export async function pricingAnalytics(client: GraphClient, query: PricingAnalyticsQuery): Promise<PricingAnalyticsResult> {
  const seconds = (ms: number) => Math.floor(ms / 1000);
  const fields =
    `pricing_analytics.start(${seconds(query.from)}).end(${seconds(query.to)}).granularity(DAILY)` +
    '.dimensions(PRICING_CATEGORY,PRICING_TYPE,COUNTRY)';
  const answer = await client.call<GraphPricingAnalytics>({
    method: 'GET',
    path: `/${encodeURIComponent(query.businessAccountId)}`,
    accessToken: whatsappCredentials(query.credentials).accessToken,
    query: { fields },
  });
  if (!answer.ok) return { kind: isGraphOutage(answer.failure) ? 'unavailable' : 'refused', error: graphFailureError(answer.failure) };
  const points = (answer.body.pricing_analytics?.data ?? []).flatMap((entry) => entry.data_points ?? []).map(pointOf);
  return { kind: 'ok', points: points.filter((point): point is PricingAnalyticsPoint => point !== undefined) };
}
