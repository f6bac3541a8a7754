import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import { forgetWorkerHeartbeats, recordWorkerHeartbeat } from '../db/workerHeartbeats.ts';

const EVERY_MS = 5000;
const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * A worker's "I am alive and claiming", written at most every few seconds (one tiny upsert), so
 * /readyz can tell due work nobody claims from a backlog being worked through.
 */
export class WorkerHeartbeat {
  readonly #database: Database;
  readonly #logger: Logger;
  readonly #workerId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  #lastAt = 0;

  constructor(database: Database, logger: Logger) {
    this.#database = database;
    this.#logger = logger;
  }

  beat(now: number): void {
    if (now - this.#lastAt < EVERY_MS) return;
    this.#lastAt = now;
    void recordWorkerHeartbeat(this.#database.db, this.#workerId, now)
      .then(() => (Math.random() < 0.01 ? forgetWorkerHeartbeats(this.#database.db, now - FORGET_AFTER_MS) : undefined))
      .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not record the worker heartbeat'));
  }
}
