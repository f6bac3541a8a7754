import { type CostReconciliationRow, listReconciliations } from '../db/costReconciliations.ts';
import type { Db } from '../db/database.ts';
import { type CostDimension, type CostGroup, DAY_MS, readCosts } from '../db/messageCosts.ts';
import { DomainError } from '../errors.ts';

// What the project's delivered messages cost, from the cost counters (db/messageCosts.ts): an
// answer reads the counter rows of its days, whatever the project's size; and how those totals
// compare with Meta's own (the reconciliation job's results).

const MAX_DAYS = 366;

export type CostFigures = Omit<CostGroup, 'keys'>;

function rangeError(message: string): DomainError {
  return new DomainError('invalid_time_range', message, { errors: [{ field: 'query:/to', code: 'invalid_range', message }] });
}

/** [from, to) widened to whole UTC days, checked. */
function dayRange(from: number, to: number): { start: number; end: number } {
  if (to <= from) throw rangeError('to must be after from.');
  const start = from - (from % DAY_MS);
  const end = to % DAY_MS === 0 ? to : to - (to % DAY_MS) + DAY_MS;
  if (end - start > MAX_DAYS * DAY_MS) throw rangeError(`from and to may be at most ${MAX_DAYS} days apart.`);
  return { start, end };
}

/** Totals per currency and the non-empty groups by `by` (sorted by their keys, then currency). */
export async function costAnalytics(db: Db, projectId: string, query: { from: number; to: number; by: readonly CostDimension[] }) {
  const { start, end } = dayRange(query.from, query.to);
  const { by } = query;
  const rows = await readCosts(db, projectId, { from: start, to: end, by });
  const totals = new Map<string, CostFigures>();
  for (const row of rows) {
    const total = totals.get(row.currency) ?? { currency: row.currency, amountMicros: 0, charged: 0, free: 0, unpriced: 0 };
    total.amountMicros += row.amountMicros;
    total.charged += row.charged;
    total.free += row.free;
    total.unpriced += row.unpriced;
    totals.set(row.currency, total);
  }
  const sortKey = (row: CostGroup) => JSON.stringify([...by.map((d) => row.keys[d]), row.currency]);
  const groups = rows
    .filter((row) => row.charged !== 0 || row.free !== 0 || row.unpriced !== 0)
    .sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
  return { start, end, totals: [...totals.values()].sort((a, b) => (a.currency < b.currency ? -1 : 1)), groups };
}

/** The reconciliation results of the days in [from, to) (whole UTC days). */
export async function costReconciliations(db: Db, projectId: string, query: { from: number; to: number }): Promise<CostReconciliationRow[]> {
  const { start, end } = dayRange(query.from, query.to);
  return listReconciliations(db, projectId, { from: start, to: end });
}
