import type { Db } from '../db/database.ts';
import { type CountDimension, HOUR_MS, readHourlyCounts } from '../db/messageCounts.ts';
import { DomainError } from '../errors.ts';

// Message figures over time, from the hourly counters (db/messageCounts.ts): a page of buckets
// reads at most one row per hour and key, whatever the project's size.

const DAY_MS = 24 * HOUR_MS;
const INTERVAL_MS = { hour: HOUR_MS, day: DAY_MS } as const;
/** The most buckets one answer holds: 31 days of hours, 366 days. */
const MAX_SPAN_MS = { hour: 31 * DAY_MS, day: 366 * DAY_MS } as const;
const STATUSES = ['QUEUED', 'SENT', 'DELIVERED', 'READ', 'FAILED', 'CANCELED'] as const;

export type AnalyticsInterval = keyof typeof INTERVAL_MS;

export interface MessageAnalytics {
  /** `from` rounded down and `to` up to the interval, epoch ms. */
  start: number;
  end: number;
  buckets: { start: number; counts: Record<string, number> }[];
}

function rangeError(message: string): DomainError {
  return new DomainError('invalid_time_range', message, { errors: [{ field: 'query:/to', code: 'invalid_range', message }] });
}

/** The project's counts in [from, to) per hour or day, zero-filled, oldest first. */
export async function messageAnalytics(
  db: Db,
  projectId: string,
  query: { from: number; to: number; interval: AnalyticsInterval; groupBy: CountDimension },
): Promise<MessageAnalytics> {
  const { from, to, interval, groupBy } = query;
  const step = INTERVAL_MS[interval];
  const start = from - (from % step);
  if (to <= from) throw rangeError('to must be after from.');
  // Whole buckets only: the counters are hourly, so a bucket cut short would count past `to`.
  const end = to % step === 0 ? to : to - (to % step) + step;
  if (end - start > MAX_SPAN_MS[interval]) {
    throw rangeError(`At interval=${interval}, from and to may be at most ${interval === 'hour' ? 31 : 366} days apart.`);
  }
  const hours = await readHourlyCounts(db, projectId, { from: start, to: end, by: groupBy });
  const keys = groupBy === 'status' ? [...STATUSES] : [...new Set(hours.map((row) => row.key))].sort();
  const buckets: MessageAnalytics['buckets'] = [];
  for (let at = start; at < end; at += step) {
    buckets.push({ start: at, counts: Object.fromEntries(keys.map((key) => [key, 0])) });
  }
  for (const row of hours) {
    // Day buckets sum their hours (UTC days: hours and days both start at multiples of the epoch).
    const bucket = buckets[Math.floor((row.hour - start) / step)];
    if (bucket) bucket.counts[row.key] = (bucket.counts[row.key] ?? 0) + row.count;
  }
  return { start, end, buckets };
}
