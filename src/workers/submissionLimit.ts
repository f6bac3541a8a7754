// How many submissions the dispatcher keeps going at once (started, outcome not yet committed).
//
// Every outcome passes through the one writer of the database (SQLite) or this process's one
// group-commit transaction at a time (PostgreSQL). Submitting faster than outcomes can be
// recorded adds no throughput: it only lengthens the queue in front of the writer, and every new
// submission — a new tenant's first message too — waits at its back (measured at 10,000
// backlogged projects: 2,000+ in flight, a second of queue). So the limit follows the time an
// answer waits to be recorded: above the target it shrinks (multiplicatively), at or below it
// grows back (by a tenth) up to the configured maximum. The provider's own latency is not part
// of the signal: a slow provider needs many in flight, and gets them.

export interface SubmissionLimitOptions {
  /** The ceiling (SVC_DISPATCH_CONCURRENCY). */
  max: number;
  /** The floor: enough for full group commits. */
  min: number;
  /** The wait for the record, averaged over an interval, that the limit keeps under. */
  targetWaitMs: number;
  /** How often the limit is adjusted. */
  intervalMs: number;
}

export const SUBMISSION_LIMIT_DEFAULTS: Omit<SubmissionLimitOptions, 'max'> = { min: 200, targetWaitMs: 100, intervalMs: 250 };

const DECREASE = 0.75;
const INCREASE = 0.1;

export class SubmissionLimit {
  readonly #options: SubmissionLimitOptions;
  #value: number;
  #intervalStart: number | undefined;
  #waitSum = 0;
  #waits = 0;

  constructor(options: SubmissionLimitOptions) {
    this.#options = { ...options, min: Math.min(options.min, options.max) };
    this.#value = options.max;
  }

  get value(): number {
    return this.#value;
  }

  /** An outcome was committed `waitMs` after the provider answered, at `now`. */
  recorded(waitMs: number, now: number): void {
    this.#intervalStart ??= now;
    this.#waitSum += waitMs;
    this.#waits++;
    if (now - this.#intervalStart < this.#options.intervalMs) return;
    const mean = this.#waitSum / this.#waits;
    const { min, max, targetWaitMs } = this.#options;
    this.#value =
      mean > targetWaitMs
        ? Math.max(min, Math.floor(this.#value * DECREASE))
        : Math.min(max, this.#value + Math.max(1, Math.ceil(this.#value * INCREASE)));
    this.#intervalStart = now;
    this.#waitSum = 0;
    this.#waits = 0;
  }
}
