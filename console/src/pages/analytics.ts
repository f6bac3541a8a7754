import { legend, lineChart, type Point, type Series } from '../chart.ts';
import { field, h, replace, table } from '../dom.ts';
import { CONSOLE, type Page } from '../page.ts';
import { showError } from '../ui.ts';

// Messages sent, delivered, read and failed over time, from GET /v1/analytics/messages
// (issue 12), drawn as SVG, with the numbers in a table too.

interface Analytics {
  from: string;
  to: string;
  interval: 'hour' | 'day';
  buckets: Point[];
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
      const data = await ctx.api.get<Analytics>('/v1/analytics/messages', { ...timeWindow(range), interval, groupBy: 'status' });
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
