import type { Database } from '../db/database.ts';
import { recordApiKeyUse } from '../db/apiKeys.ts';
import type { Logger } from 'pino';

const RECORD_EVERY_MS = 60_000;
const FLUSH_EVERY_MS = 1_000;

/**
 * Keeps api_keys.last_used_at fresh to the minute without touching the request path: requests
 * note their key in memory; a timer writes the keys due, at most once a minute each.
 */
export class KeyUsageRecorder {
  readonly #database: Database;
  readonly #logger: Logger;
  readonly #lastRecorded = new Map<string, number>();
  #pending = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(database: Database, logger: Logger) {
    this.#database = database;
    this.#logger = logger;
  }

  start(): void {
    this.#timer = setInterval(() => void this.flush(), FLUSH_EVERY_MS);
    this.#timer.unref();
  }

  note(keyId: string, now: number = Date.now()): void {
    const last = this.#lastRecorded.get(keyId);
    if (last !== undefined && now - last < RECORD_EVERY_MS) return;
    this.#lastRecorded.set(keyId, now);
    this.#pending.add(keyId);
  }

  async flush(now: number = Date.now()): Promise<void> {
    if (this.#pending.size === 0) return;
    const ids = [...this.#pending];
    this.#pending = new Set();
    try {
      await recordApiKeyUse(this.#database.db, ids, now);
    } catch (error) {
      this.#logger.warn({ err: error }, 'could not record API key use');
    }
    if (this.#lastRecorded.size > 100_000) this.#lastRecorded.clear();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.flush();
  }
}
