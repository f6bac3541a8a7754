import type { Logger } from 'pino';

/** One kind of background work: claim what is due, do it, record it. */
export interface Job {
  readonly name: string;
  /**
   * Does one batch of due work. Returns how many items it handled and, when idle, when the next
   * item falls due (so the loop sleeps exactly that long, or until woken).
   */
  runOnce(now: number): Promise<{ handled: number; nextDueAt?: number }>;
}

const IDLE_POLL_MS = 1000;
const ERROR_BACKOFF_MS = 1000;

/**
 * Runs a job in a loop: back to back while there is work, then asleep until the next due time,
 * a wake-up (new work was committed) or a poll — the poll catches work from processes that
 * cannot notify us and leases that expired after a crash.
 */
export class WorkerLoop {
  readonly #job: Job;
  readonly #logger: Logger;
  readonly #pollMs: number;
  #running = false;
  #wakeRequested = false;
  #sleeper: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  #done: Promise<void> | undefined;

  constructor(job: Job, logger: Logger, options: { pollMs?: number } = {}) {
    this.#job = job;
    this.#logger = logger.child({ worker: job.name });
    this.#pollMs = options.pollMs ?? IDLE_POLL_MS;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#done = this.#run();
  }

  wake(): void {
    this.#wakeRequested = true;
    if (this.#sleeper) {
      clearTimeout(this.#sleeper.timer);
      this.#sleeper.resolve();
    }
  }

  /** Finishes the batch in hand, then stops. */
  async stop(): Promise<void> {
    this.#running = false;
    this.wake();
    await this.#done;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      this.#wakeRequested = false;
      let sleepMs = 0;
      try {
        const now = Date.now();
        const { handled, nextDueAt } = await this.#job.runOnce(now);
        if (handled === 0) {
          sleepMs = this.#pollMs;
          if (nextDueAt !== undefined) sleepMs = Math.max(0, Math.min(sleepMs, nextDueAt - Date.now()));
        }
      } catch (error) {
        this.#logger.error({ err: error }, 'worker batch failed');
        sleepMs = ERROR_BACKOFF_MS;
      }
      if (sleepMs > 0 && this.#running && !this.#wakeRequested) await this.#sleep(sleepMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#sleeper = undefined;
        resolve();
      }, ms);
      this.#sleeper = {
        timer,
        resolve: () => {
          this.#sleeper = undefined;
          resolve();
        },
      };
    });
  }
}
