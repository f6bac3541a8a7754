import type { Logger } from 'pino';
import { Counter } from 'prom-client';

// Messages the provider held for quality assessment (Meta's business portfolio pacing): taken,
// but sent only when Meta releases them in batches, or dropped (FAILED, 132015) when feedback on
// the first batches looks bad. A burst of drops means the portfolio is under review and cannot
// send or create templates meanwhile: worth an operator's alert.

export const heldMessagesCounter = new Counter({
  name: 'svc_provider_held_messages_total',
  help: 'Messages the provider held for quality assessment (held), then released (sent) or dropped (failed, 132015).',
  labelNames: ['event'] as const,
  registers: [],
});

export const droppedMessagesCounter = new Counter({
  name: 'svc_provider_dropped_messages_total',
  help: 'Messages the provider failed with 132015 (WhatsApp: held messages dropped by portfolio pacing, or a paused template).',
  registers: [],
});

export const dropBurstsCounter = new Counter({
  name: 'svc_provider_drop_bursts_total',
  help: 'Bursts of 132015 failures on one sending number (an operator alert was logged for each).',
  registers: [],
});

/** Meta's 132015: a held message dropped (portfolio pacing), or a template paused for low quality. */
export const DROPPED_CODE = '132015';

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
 * Counts 132015 failures per sending number in a sliding window and raises an operator alert — an
 * error-level log and dropBurstsCounter — when a number reaches the threshold, at most once per
 * window per number. In memory, per process: each process alerts on what it applied.
 */
export class DropBurstWatch {
  readonly #logger: Logger;
  readonly #settings: DropBurstSettings;
  readonly #now: () => number;
  readonly #numbers = new Map<string, { drops: number[]; alertedAt: number | undefined }>();

  constructor(logger: Logger, settings: DropBurstSettings = DEFAULT_DROP_BURST, now: () => number = Date.now) {
    this.#logger = logger;
    this.#settings = settings;
    this.#now = now;
  }

  /** One message failed with 132015 on this number; true when it raised an alert. */
  record(phoneNumberId: string): boolean {
    droppedMessagesCounter.inc();
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
    dropBurstsCounter.inc();
    this.#logger.error(
      { phoneNumberId, dropped: watched.drops.length, windowSeconds: windowMs / 1000, code: DROPPED_CODE },
      `the provider dropped ${watched.drops.length} messages of number ${phoneNumberId} with ${DROPPED_CODE} within ` +
        `${windowMs / 60_000} minutes: its business portfolio is likely under review (WhatsApp portfolio pacing) and ` +
        'cannot send or create templates meanwhile; check WhatsApp Manager and Meta Business Suite',
    );
    return true;
  }
}
