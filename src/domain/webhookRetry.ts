import { withJitter } from './durations.ts';

// When a failed webhook attempt is tried again. The schedule (SVC_WEBHOOK_RETRY_SCHEDULE) gives
// the wait before each retry, moved by ±10 % jitter so that receivers coming back from an
// outage are not hit by every delivery at the same instant. A receiver's Retry-After is honoured
// when it asks for more time than the schedule gives, up to a day; it never makes a retry come
// sooner than the schedule, nor adds attempts beyond it.

export const RETRY_JITTER = 0.1;
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * The wait before the next attempt, after `attemptsMade` attempts that all failed, or undefined
 * when the schedule is spent and the delivery has failed.
 */
export function nextRetryDelay(
  schedule: readonly number[],
  attemptsMade: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number | undefined {
  const base = schedule[attemptsMade - 1];
  if (base === undefined) return undefined;
  const delay = withJitter(base, RETRY_JITTER, random);
  if (retryAfterMs === undefined) return delay;
  return Math.max(delay, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

// The HTTP date form (RFC 9110 §5.6.7), e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** A Retry-After header (delay in seconds, or an HTTP date) as milliseconds from `now`. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!IMF_FIXDATE.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
