import type { Logger } from 'pino';
import type { MessageCounters } from './messageCounters.ts';

// Messages the provider held for quality assessment (WhatsApp: the business portfolio's pacing):
// taken, but sent only when the provider releases them in batches, or dropped (FAILED, with a code
// the provider classifies 'held_dropped') when feedback on the first batches looks bad. A burst of
// drops means the sending account is under review and cannot send or create templates meanwhile:
// worth an operator's alert.

export interface DropBurstSettings {
  /** Drops on one number within `windowMs` that make a burst. */
  threshold: number;
  windowMs: number;
}

/** Meta drops every remaining held message at once: ten in ten minutes is no coincidence. */
export const DEFAULT_DROP_BURST: DropBurstSettings = { threshold: 10, windowMs: 10 * 60_000 };

/** Numbers watched at most (a bound on memory whatever arrives); the oldest are forgotten first. */
const MAX_NUMBERS = 10_000;

/**
 * Counts dropped held messages per sending number in a sliding window and raises an operator alert — an
 * error-level log and the dropBursts counter — when a number reaches the threshold, at most once per
 * window per number. In memory, per process: each process alerts on what it applied.
 */
export class DropBurstWatch {
  readonly #logger: Logger;
  readonly #settings: DropBurstSettings;
  readonly #now: () => number;
  readonly #counters: Pick<MessageCounters, 'dropped' | 'dropBursts'> | undefined;
  readonly #numbers = new Map<string, { drops: number[]; alertedAt: number | undefined }>();

  constructor(
    logger: Logger,
    settings: DropBurstSettings = DEFAULT_DROP_BURST,
    now: () => number = Date.now,
    counters?: Pick<MessageCounters, 'dropped' | 'dropBursts'>,
  ) {
    this.#logger = logger;
    this.#settings = settings;
    this.#now = now;
    this.#counters = counters;
  }

  /** One held message on this number was dropped with the provider's `code`; true when it raised an alert. */
  record(phoneNumberId: string, code: string): boolean {
    this.#counters?.dropped.inc();
    const now = this.#now();
    const { threshold, windowMs } = this.#settings;
    let watched = this.#numbers.get(phoneNumberId);
    if (watched === undefined) {
      if (this.#numbers.size >= MAX_NUMBERS) this.#numbers.delete(this.#numbers.keys().next().value!);
      watched = { drops: [], alertedAt: undefined };
      this.#numbers.set(phoneNumberId, watched);
    }
    watched.drops.push(now);
    while (watched.drops.length > 0 && watched.drops[0]! <= now - windowMs) watched.drops.shift();
    // Only the last `threshold` drops matter.
    if (watched.drops.length > threshold) watched.drops.splice(0, watched.drops.length - threshold);
    if (watched.drops.length < threshold) return false;
    if (watched.alertedAt !== undefined && now - watched.alertedAt < windowMs) return false;
    watched.alertedAt = now;
    this.#counters?.dropBursts.inc();
    this.#logger.error(
      { phoneNumberId, dropped: watched.drops.length, windowSeconds: windowMs / 1000, code },
      `the provider dropped ${watched.drops.length} messages of number ${phoneNumberId} with ${code} within ` +
        `${windowMs / 60_000} minutes: its business portfolio is likely under review (WhatsApp portfolio pacing) and ` +
        'cannot send or create templates meanwhile; check WhatsApp Manager and Meta Business Suite',
    );
    return true;
  }
}
