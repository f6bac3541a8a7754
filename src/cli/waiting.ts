import { CliError, EXIT, usageError } from './exitCodes.ts';

// Waiting for something to happen at the API (a review, a message's status): polls, a
// --timeout, and durations as people write them.

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "500ms", "30s", "10m", "2h" (or bare milliseconds) as milliseconds. */
export function parseDuration(text: string, option = '--timeout'): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw usageError(`${option} must be a duration such as 30s, 10m or 2h, not "${text}"`);
  return Math.round(Number(match[1]) * UNITS[match[2] ?? 'ms']!);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls `probe` every `intervalMs` until it returns a value (not undefined); a CliError with
 * exit 5 once `timeoutMs` has passed.
 */
export async function pollUntil<T>(
  probe: () => Promise<T | undefined>,
  options: { intervalMs: number; timeoutMs?: number; what: string },
): Promise<T> {
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new CliError(`timed out waiting for ${options.what}`, EXIT.timedOut);
    await sleep(Math.min(options.intervalMs, Math.max(0, deadline - Date.now())));
  }
}

/** Runs `cleanup` (a spinner's stop) and exits 130 on Ctrl-C; returns a function that removes the handler. */
export function onInterrupt(cleanup: () => void): () => void {
  const handler = () => {
    cleanup();
    process.exit(EXIT.interrupted);
  };
  process.on('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}
