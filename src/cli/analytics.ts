import type { Command } from 'commander';
import { signedIn } from './api.ts';
import { group, leaf, runs } from './command.ts';
import { usageError } from './exitCodes.ts';
import { table } from './output.ts';

// svc analytics cost: what delivered messages cost over a range of whole UTC days
// (GET /v1/analytics/cost), grouped by day, template, category, market and/or country; totals per
// currency. Columns come from the answer's own `groupBy`, so keys svc adds later show as well.

const KEYS = ['day', 'template', 'category', 'market', 'country'];
const COUNTS = ['amount', 'charged', 'free', 'unpriced'] as const;
const DAY_MS = 86_400_000;

/** `2026-11-01` or an ISO date-time, as the ISO date-time the API takes. */
function instant(value: string, flag: string): string {
  const text = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00.000Z` : value;
  const time = Date.parse(text);
  if (Number.isNaN(time)) throw usageError(`${flag} must be a date (2026-11-01) or an ISO date-time, not ${JSON.stringify(value)}`);
  return new Date(time).toISOString();
}

/** An amount as people read money: at least 2 decimals, at most the 6 the API gives. */
function money(amount: unknown): string {
  if (typeof amount !== 'number') return String(amount ?? '');
  const fixed = amount.toFixed(6).replace(/0+$/, '');
  const [units, decimals = ''] = fixed.split('.');
  return `${units}.${decimals.padEnd(2, '0')}`;
}

const cell = (key: string, value: unknown) => (key === 'day' && typeof value === 'string' ? value.slice(0, 10) : (value as string | number | undefined));

type Row = Record<string, unknown>;

export function registerAnalyticsCommands(program: Command): void {
  const analytics = group(program, 'analytics', 'what was sent and what it cost');
  const cost = leaf(analytics, 'cost', 'the cost of delivered messages over whole UTC days, grouped, with totals per currency')
    .option('--from <date>', 'first day (2026-11-01 or an ISO time; default: 30 days before --to)')
    .option('--to <date>', 'the day after the last (exclusive; default: tomorrow, so today is in)')
    .option('--group-by <keys>', `comma-separated: ${KEYS.join(', ')}`, 'day');
  runs<{ json?: boolean; from?: string; to?: string; groupBy: string }>(cost, async (out, options) => {
    const to = options.to === undefined ? new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS).toISOString() : instant(options.to, '--to');
    const from = options.from === undefined ? new Date(Date.parse(to) - 30 * DAY_MS).toISOString() : instant(options.from, '--from');
    const groupBy = options.groupBy.replace(/\s+/g, '');
    const api = signedIn();
    const answer = await api.call(api.svc.GET('/v1/analytics/cost', { params: { query: { from, to, groupBy } } }));
    out.result(answer, () => {
      const keys = (answer.groupBy as string[]).filter((key) => key !== 'currency');
      const groups = answer.groups as Row[];
      const totals = answer.totals as Row[];
      const header = [...keys.map((key) => key.toUpperCase()), 'CURRENCY', 'AMOUNT', 'CHARGED', 'FREE', 'UNPRICED'];
      const row = (entry: Row, labels: (string | number | undefined)[]) => [...labels, entry.currency as string, money(entry.amount), ...COUNTS.slice(1).map((count) => entry[count] as number)];
      const range = `${answer.from.slice(0, 10)} to ${answer.to.slice(0, 10)} (exclusive)`;
      if (totals.length === 0) return `No delivered message to price from ${range}.`;
      return [
        `Cost of delivered messages from ${range}, by ${keys.join(', ') || 'nothing'}:`,
        table(header, [
          ...groups.map((entry) => row(entry, keys.map((key) => cell(key, entry[key])))),
          ...totals.map((entry) => row(entry, keys.map((_, index) => (index === 0 ? 'TOTAL' : '')))),
        ]),
        ...(totals.some((entry) => Number(entry.unpriced) > 0) ? ['UNPRICED: charged messages the rate card has no rate for (not in AMOUNT).'] : []),
      ].join('\n');
    });
  });
}
