import type { PricingAnalyticsPoint, PricingAnalyticsQuery, PricingAnalyticsResult } from '../provider.ts';
import type { GraphClient } from './client.ts';
import { graphFailureError, isGraphOutage } from './errors.ts';
import { whatsappCredentials } from './credentials.ts';

// Meta's own totals of what a WABA was charged (analytics docs, "Pricing analytics"):
// GET /{waba-id}?fields=pricing_analytics.start(S).end(E).granularity(DAILY).dimensions(…),
// one data point per day, country, pricing type and category, with `volume` (messages delivered)
// and `cost` (approximate, in the WABA's currency). A long answer comes in pages, as the Graph
// API pages any list: `paging.next` is the URL of the next page (absent on the last), and svc
// asks for it at its own Graph URL (never the host the link names) with the same token.

/** Pages followed at most: three days of points per country, category and type fit in a few. */
const MAX_PAGES = 50;

interface GraphPage {
  data?: Array<{ data_points?: unknown[] }>;
  paging?: { next?: unknown; cursors?: { after?: unknown } };
}

interface GraphPricingAnalytics extends GraphPage {
  pricing_analytics?: GraphPage;
}

/** The path (after the version) and query of a `paging.next` URL, without its access token. */
function nextPage(next: unknown): { path: string; query: Record<string, string> } | undefined {
  if (typeof next !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(next);
  } catch {
    return undefined;
  }
  const path = url.pathname.replace(/^\/v\d+\.\d+(?=\/)/, '');
  if (!/^\/[^/]+(\/[^/]+)?$/.test(path)) return undefined;
  const query = Object.fromEntries([...url.searchParams].filter(([name]) => name !== 'access_token'));
  return { path, query };
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
  const points: PricingAnalyticsPoint[] = [];
  let page: { path: string; query: Record<string, string> } | undefined = { path: `/${encodeURIComponent(query.businessAccountId)}`, query: { fields } };
  for (let count = 0; page !== undefined; count++) {
    if (count === MAX_PAGES) {
      return {
        kind: 'refused',
        error: { code: 'too_many_pages', title: 'Answer too long', message: `pricing_analytics ran past ${MAX_PAGES} pages; the days were not compared.` },
      };
    }
    const answer = await client.call<GraphPricingAnalytics>({ method: 'GET', path: page.path, accessToken: whatsappCredentials(query.credentials).accessToken, query: page.query });
    if (!answer.ok) return { kind: isGraphOutage(answer.failure) ? 'unavailable' : 'refused', error: graphFailureError(answer.failure) };
    // The first page nests the list under the field; a followed link answers with the list itself.
    const list: GraphPage = answer.body?.pricing_analytics ?? answer.body ?? {};
    for (const entry of list.data ?? []) {
      for (const raw of entry.data_points ?? []) {
        const point = pointOf(raw);
        if (point) points.push(point);
      }
    }
    page = nextPage(list.paging?.next ?? answer.body?.paging?.next);
  }
  return { kind: 'ok', points };
}
