// Durations as operators write them: "100ms", "5s", "2m", "1h", "1d".
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration (use forms like 100ms, 5s, 2m, 1h, 1d)`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
}

/** A comma-separated retry schedule such as "1s,5s,30s": the wait before each retry. */
export function parseSchedule(text: string): number[] {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) throw new Error('a schedule needs at least one duration');
  return parts.map(parseDuration);
}

/** `base` moved by a uniformly random amount of up to ±`ratio` of itself. */
export function withJitter(base: number, ratio: number, random: () => number = Math.random): number {
  return Math.max(0, Math.round(base * (1 + (random() * 2 - 1) * ratio)));
}

/** A duration as operators write it, in the largest unit that divides it: 400d, 90m, 1500ms. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms % UNIT_MS[unit]! === 0) return `${ms / UNIT_MS[unit]!}${unit}`;
  }
  return `${ms}ms`;
}
