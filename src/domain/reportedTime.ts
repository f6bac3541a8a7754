// Times a provider reports (a status's timestamp, a review's time) come from its clock and its
// payload: never trusted as they are. A time is kept within [the earliest it can be, now plus a
// little skew], so an absurd one (a year 300,000 timestamp, an object, NaN) can neither be stored
// nor break every later read of the record. Pure: no I/O.

/** How far ahead of ours a provider's clock may run. */
export const MAX_CLOCK_SKEW_MS = 60_000;

export function reportedTime(at: number, bounds: { notBefore: number; now: number }): number {
  const latest = bounds.now + MAX_CLOCK_SKEW_MS;
  if (!Number.isFinite(at)) return Math.max(bounds.notBefore, Math.min(bounds.now, latest));
  return Math.max(bounds.notBefore, Math.min(at, latest));
}
