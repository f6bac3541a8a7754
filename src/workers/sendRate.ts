import type { Database } from '../db/database.ts';

/**
 * Paces sending per phone number to the provider's throughput (SVC_PROVIDER_MAX_MPS) in each
 * calendar second. With SQLite one process sends, so memory is enough; with PostgreSQL every
 * worker reserves from a shared counter row, so the cap holds across processes.
 */
export interface SendRateGate {
  /** Reserves up to `wanted` sends for this number now; returns how many may go, and when to try again. */
  reserve(phoneNumberId: string, wanted: number, now: number): Promise<{ granted: number; retryAt: number }>;
}

const WINDOW_MS = 1000;

export class MemorySendRateGate implements SendRateGate {
  readonly #maxPerSecond: number;
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(maxPerSecond: number) {
    this.#maxPerSecond = maxPerSecond;
  }

  async reserve(phoneNumberId: string, wanted: number, now: number) {
    const start = now - (now % WINDOW_MS);
    let window = this.#windows.get(phoneNumberId);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      this.#windows.set(phoneNumberId, window);
    }
    const granted = Math.max(0, Math.min(wanted, this.#maxPerSecond - window.count));
    window.count += granted;
    return { granted, retryAt: start + WINDOW_MS };
  }
}

export class PostgresSendRateGate implements SendRateGate {
  readonly #database: Database;
  readonly #maxPerSecond: number;
  #lastCleanup = 0;

  constructor(database: Database, maxPerSecond: number) {
    this.#database = database;
    this.#maxPerSecond = maxPerSecond;
  }

  async reserve(phoneNumberId: string, wanted: number, now: number) {
    const start = now - (now % WINDOW_MS);
    // The row lock serialises workers on one number's second: each takes what is left of it.
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
      const take = Math.max(0, Math.min(wanted, this.#maxPerSecond - row.count));
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
    return { granted, retryAt: start + WINDOW_MS };
  }
}

export function createSendRateGate(database: Database, maxPerSecond: number): SendRateGate {
  return database.dialect === 'postgres'
    ? new PostgresSendRateGate(database, maxPerSecond)
    : new MemorySendRateGate(maxPerSecond);
}
