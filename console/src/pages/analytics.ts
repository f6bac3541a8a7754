import { legend, lineChart, type Point, type Series } from '../chart.ts';
import { field, h, replace, table } from '../dom.ts';
import { CONSOLE, type Page } from '../page.ts';
import { showError } from '../ui.ts';

// Messages sent, delivered, read and failed over time, from GET /v1/analytics/messages
// (issue 12), drawn as SVG, with the numbers in a table too; and what the delivered messages
// cost, from GET /v1/analytics/cost (issue 23), by market and category.

interface Analytics {
  from: string;
  to: string;
  interval: 'hour' | 'day';
  buckets: Point[];
}

interface CostFigures {
  currency: string;
  amount: number;
  charged: number;
  free: number;
  unpriced: number;
}

interface CostAnalytics {
  totals: CostFigures[];
  groups: (CostFigures & { market: string; category: string })[];
}

/** An amount as the rate card gives it: up to six decimals, no trailing zeros beyond two. */
function money(amount: number, currency: string): string {
  return `${amount.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })} ${currency}`;
}

/** Spend over the range's whole UTC days, in each currency, with a table by market and category. */
function spendSection(cost: CostAnalytics, rangeLabel: string): HTMLElement {
  const totals = cost.totals.length === 0 ? [{ currency: '', amount: 0, charged: 0, free: 0, unpriced: 0 }] : cost.totals;
  const summary = h(
    'dl',
    { class: 'spend', 'aria-label': 'Spend' },
    totals.flatMap((total) => [
      h('dt', null, 'Spend'),
      h('dd', { 'data-testid': 'spend-total' }, total.currency === '' ? 'Nothing charged' : money(total.amount, total.currency)),
      h('dt', null, 'Charged messages'),
      h('dd', null, String(total.charged)),
      h('dt', null, 'Free messages'),
      h('dd', null, String(total.free)),
      ...(total.unpriced > 0 ? [h('dt', null, 'Not on the rate card'), h('dd', null, String(total.unpriced))] : []),
    ]),
  );
  const rows = h(
    'tbody',
    null,
    cost.groups.map((group) =>
      h('tr', null, h('th', { scope: 'row' }, group.market || 'Unknown'), h('td', null, group.category), h('td', null, String(group.charged)), h('td', null, money(group.amount, group.currency))),
    ),
  );
  return h(
    'section',
    { 'aria-label': 'Spend' },
    h('h2', null, `Spend, ${rangeLabel.replace(/, by (hour|day)$/, '').toLowerCase()} (whole UTC days)`),
    h('p', { class: 'hint' }, 'Delivered messages priced by the operator’s rate card from Meta’s pricing; Meta’s invoice is the authority.'),
    summary,
    table('Spend by market and category', ['Market', 'Category', 'Charged', 'Amount'], rows),
  );
}

const SERIES: Series[] = [
  { key: 'SENT', label: 'Sent' },
  { key: 'DELIVERED', label: 'Delivered' },
  { key: 'READ', label: 'Read' },
  { key: 'FAILED', label: 'Failed' },
];

const RANGES = {
  '24h': { label: 'Last 24 hours, by hour', interval: 'hour', count: 24 },
  '7d': { label: 'Last 7 days, by day', interval: 'day', count: 7 },
  '30d': { label: 'Last 30 days, by day', interval: 'day', count: 30 },
} as const;
type Range = keyof typeof RANGES;

/** [from, to): whole buckets in UTC, the current one included. */
function timeWindow(range: Range): { from: string; to: string } {
  const { interval, count } = RANGES[range];
  const size = interval === 'hour' ? 3_600_000 : 86_400_000;
  const to = Math.floor(Date.now() / size) * size + size;
  return { from: new Date(to - count * size).toISOString(), to: new Date(to).toISOString() };
}

export const analyticsPage: Page = {
  title: 'Analytics',
  async render(ctx) {
    const range: Range = (ctx.query.get('range') as Range) in RANGES ? (ctx.query.get('range') as Range) : '24h';
    const { interval } = RANGES[range];
    const select = h('select', { name: 'range' }, Object.entries(RANGES).map(([value, { label }]) => h('option', { value, selected: value === range }, label)));
    const form = h('form', { class: 'filters', 'aria-label': 'Time range' }, field('Range', select), h('button', { type: 'submit' }, 'Show'));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      ctx.navigate(`${CONSOLE}/analytics?range=${select.value}`);
    });
    const body = h('div', { class: 'chart-box' });
    replace(ctx.main, h('h1', { tabindex: -1 }, 'Analytics'), form, body);
    const label = (start: string) => {
      const date = new Date(start);
      return interval === 'hour' ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : date.toLocaleDateString([], { month: 'short', day: 'numeric' });
    };
    const load = async () => {
      const window = timeWindow(range);
      const [data, cost] = await Promise.all([
        ctx.api.get<Analytics>('/v1/analytics/messages', { ...window, interval, groupBy: 'status' }),
        ctx.api.get<CostAnalytics>('/v1/analytics/cost', { ...window, groupBy: 'market,category' }),
      ]);
      if (ctx.signal.aborted) return;
      const rows = h(
        'tbody',
        null,
        data.buckets.map((bucket) =>
          h('tr', null, h('th', { scope: 'row' }, new Date(bucket.start).toLocaleString()), SERIES.map((line) => h('td', null, String(bucket.counts[line.key] ?? 0)))),
        ),
      );
      replace(
        body,
        h('h2', null, `Status changes, ${RANGES[range].label.toLowerCase()}`),
        legend(SERIES),
        lineChart('Messages by status', data.buckets, SERIES, label),
        h('details', null, h('summary', null, 'The numbers'), table('Status changes per bucket', ['Bucket start', ...SERIES.map((line) => line.label)], rows)),
        spendSection(cost, RANGES[range].label),
      );
    };
    try {
      await load();
    } catch (error) {
      showError(body, error, 'Analytics');
      return;
    }
    ctx.poll(30_000, load);
  },
};
