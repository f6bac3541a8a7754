import type { Database } from '../db/database.ts';

// Pacing per phone number to the provider's throughput (SVC_PROVIDER_MAX_MPS). Each second is cut
// into ten 100 ms windows that share the second's budget exactly, so sending is smooth rather
// than a burst at the top of each second. A reservation is good only inside its window: the
// dispatcher defers what it could not submit in time, so the provider never sees more than the
// cap in any calendar second.

export const WINDOW_MS = 100;
const WINDOWS_PER_SECOND = 1000 / WINDOW_MS;

/** The budget of the window that starts at `windowStart`: the second's budget spread evenly. */
export function windowBudget(maxPerSecond: number, windowStart: number): number {
  const index = Math.floor((windowStart % 1000) / WINDOW_MS);
  return (
    Math.floor(((index + 1) * maxPerSecond) / WINDOWS_PER_SECOND) - Math.floor((index * maxPerSecond) / WINDOWS_PER_SECOND)
  );
}

export interface Reservation {
  /** How many sends may go now. */
  granted: number;
  /** The reservation's window ends here: submit before it, or defer to it. */
  windowEnd: number;
}

export interface SendRateGate {
  reserve(phoneNumberId: string, wanted: number, now: number): Promise<Reservation>;
}

/** With SQLite one process sends, so memory is enough. */
export class MemorySendRateGate implements SendRateGate {
  readonly #maxPerSecond: number;
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(maxPerSecond: number) {
    this.#maxPerSecond = maxPerSecond;
  }

  async reserve(phoneNumberId: string, wanted: number, now: number): Promise<Reservation> {
    const start = now - (now % WINDOW_MS);
    let window = this.#windows.get(phoneNumberId);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      this.#windows.set(phoneNumberId, window);
    }
    const granted = Math.max(0, Math.min(wanted, windowBudget(this.#maxPerSecond, start) - window.count));
    window.count += granted;
    return { granted, windowEnd: start + WINDOW_MS };
  }
}

/** With PostgreSQL every worker reserves from a shared counter row, so the cap holds across processes. */
export class PostgresSendRateGate implements SendRateGate {
  readonly #database: Database;
  readonly #maxPerSecond: number;
  #lastCleanup = 0;

  constructor(database: Database, maxPerSecond: number) {
    this.#database = database;
    this.#maxPerSecond = maxPerSecond;
  }

  async reserve(phoneNumberId: string, wanted: number, now: number): Promise<Reservation> {
    const start = now - (now % WINDOW_MS);
    const budget = windowBudget(this.#maxPerSecond, start);
    // The row lock serialises workers on one number's window: each takes what is left of it.
    const granted = await this.#database.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('send_rate_windows')
        .values({ phone_number_id: phoneNumberId, window_start: start, count: 0 })
        .onConflict((conflict) => conflict.doNothing())
        .execute();
      const row = await trx
        .selectFrom('send_rate_windows')
        .select('count')
        .where('phone_number_id', '=', phoneNumberId)
        .where('window_start', '=', start)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const take = Math.max(0, Math.min(wanted, budget - row.count));
      if (take > 0) {
        await trx
          .updateTable('send_rate_windows')
          .set({ count: row.count + take })
          .where('phone_number_id', '=', phoneNumberId)
          .where('window_start', '=', start)
          .execute();
      }
      return take;
    });
    if (now - this.#lastCleanup > 60_000) {
      this.#lastCleanup = now;
      await this.#database.db.deleteFrom('send_rate_windows').where('window_start', '<', now - 60_000).execute();
    }
    return { granted, windowEnd: start + WINDOW_MS };
  }
}

export function createSendRateGate(database: Database, maxPerSecond: number): SendRateGate {
  return database.dialect === 'postgres'
    ? new PostgresSendRateGate(database, maxPerSecond)
    : new MemorySendRateGate(maxPerSecond);
}
