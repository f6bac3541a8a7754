import type { Database } from '../db/database.ts';
import { deleteSendRateWindowsBefore, reserveSendRateWindows, sendRateShared } from '../db/sendRateWindows.ts';

// Pacing per phone number to its throughput (messages per second). Each calendar second is cut
// into 100 ms windows that share the second's budget exactly, so sending is smooth rather than a
// burst at the top of each second, and no calendar second ever sees more than the cap. A
// grant is good only inside its window: the dispatcher starts what it was granted at once, and
// what it could not start in time waits for a later window.

export const WINDOW_MS = 100;
/**
 * The second's budget is spent in its first eight windows; the last two send nothing, so a send
 * delayed on its way by up to ~200 ms (a new connection, a busy event loop here or at the
 * provider's edge) still reaches the provider inside its own calendar second and never adds to
 * the next one's. With one window of margin, a loaded machine was seen to put 12 sends in a
 * second capped at 10.
 */
const WINDOWS_WITH_BUDGET = 8;

export function windowStartOf(now: number): number {
  return now - (now % WINDOW_MS);
}

/** The budget of the window that starts at `windowStart`: the second's budget spread evenly. */
export function windowBudget(maxPerSecond: number, windowStart: number): number {
  const index = Math.floor((windowStart % 1000) / WINDOW_MS);
  if (index >= WINDOWS_WITH_BUDGET) return 0;
  return (
    Math.floor(((index + 1) * maxPerSecond) / WINDOWS_WITH_BUDGET) -
    Math.floor((index * maxPerSecond) / WINDOWS_WITH_BUDGET)
  );
}

export interface SendRateGate {
  /** Takes up to `wanted` sends from this number's budget for the window holding `now`; returns how many. */
  reserve(phoneNumberId: string, wanted: number, maxPerSecond: number, now: number): Promise<number>;
}

/** With one sending process (SQLite), memory is enough. */
export class MemorySendRateGate implements SendRateGate {
  readonly #windows = new Map<string, { start: number; count: number }>();

  async reserve(phoneNumberId: string, wanted: number, maxPerSecond: number, now: number): Promise<number> {
    const start = windowStartOf(now);
    let window = this.#windows.get(phoneNumberId);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      this.#windows.set(phoneNumberId, window);
    }
    const granted = Math.max(0, Math.min(wanted, windowBudget(maxPerSecond, start) - window.count));
    window.count += granted;
    return granted;
  }
}

interface PendingReservation {
  phoneNumberId: string;
  windowStart: number;
  wanted: number;
  budget: number;
  resolve: (granted: number) => void;
  reject: (error: unknown) => void;
}

const CLEANUP_EVERY_MS = 60_000;

/**
 * With several sending processes (PostgreSQL) each reserves from shared counter rows, so the cap holds across
 * processes. The reservations asked for in one turn of the event loop go to the database as one
 * upsert (one round trip for every number), whose row locks serialise workers on a number's
 * window: each takes what is left of it.
 */
export class SharedSendRateGate implements SendRateGate {
  readonly #database: Database;
  #pending: PendingReservation[] = [];
  #lastCleanup = 0;

  constructor(database: Database) {
    this.#database = database;
  }

  reserve(phoneNumberId: string, wanted: number, maxPerSecond: number, now: number): Promise<number> {
    const windowStart = windowStartOf(now);
    return new Promise((resolve, reject) => {
      if (this.#pending.length === 0) setImmediate(() => void this.#flush());
      this.#pending.push({
        phoneNumberId,
        windowStart,
        wanted,
        budget: windowBudget(maxPerSecond, windowStart),
        resolve,
        reject,
      });
    });
  }

  async #flush(): Promise<void> {
    let batch = this.#pending;
    this.#pending = [];
    while (batch.length > 0) {
      // One statement may not touch a row twice: a number asked for twice waits for the next one.
      const seen = new Set<string>();
      const now: PendingReservation[] = [];
      const later: PendingReservation[] = [];
      for (const item of batch) {
        const key = `${item.phoneNumberId}\n${item.windowStart}`;
        (seen.has(key) ? later : now).push(item);
        seen.add(key);
      }
      try {
        const granted = await reserveSendRateWindows(this.#database.db, now);
        for (const item of now) item.resolve(granted.get(`${item.phoneNumberId}\n${item.windowStart}`) ?? 0);
      } catch (error) {
        for (const item of now) item.reject(error);
      }
      batch = later;
    }
    await this.#cleanup();
  }

  async #cleanup(): Promise<void> {
    const now = Date.now();
    if (now - this.#lastCleanup < CLEANUP_EVERY_MS) return;
    this.#lastCleanup = now;
    await deleteSendRateWindowsBefore(this.#database.db, now - CLEANUP_EVERY_MS).catch(() => {});
  }
}

export function createSendRateGate(database: Database): SendRateGate {
  return sendRateShared(database.db) ? new SharedSendRateGate(database) : new MemorySendRateGate();
}
