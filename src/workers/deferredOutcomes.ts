import type { Logger } from 'pino';
import type { MessageRow } from '../db/messages.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import type { SendOutcome } from '../providers/provider.ts';

// Send outcomes the database could not take (it is away: a restart, a failover). The provider
// has answered — an accepted message has reached it — so letting the message's lease run out
// would have it claimed and sent again: a person would get it twice. Instead the outcome is kept
// here, in memory and bounded, and committed again (with backoff) until it is; the dispatcher
// keeps holding the message meanwhile: its lease renewed whenever the database answers, and a
// claim that returns it (its lease ran out during the outage) does not send it again. Only a
// process that dies loses what is kept here: then the leases run out and another worker takes
// the messages over (at least once; README, "Reliability").

/** Retries of a commit that fails for another reason than the database being away, before giving up. */
const MAX_OTHER_FAILURES = 5;
const FIRST_RETRY_MS = 200;
const MAX_RETRY_MS = 2000;

export interface DeferredOutcome {
  message: MessageRow;
  outcome: SendOutcome;
}

interface Entry extends DeferredOutcome {
  otherFailures: number;
}

export interface DeferredOutcomesOptions {
  /** The most outcomes kept at once; beyond it an outcome is given up as before (lease expiry). */
  limit: number;
  /** Commits one outcome (OutcomeRecorder.record); concurrent calls are committed together. */
  record: (message: MessageRow, outcome: SendOutcome) => Promise<void>;
  /** Called once an outcome is committed or given up: the message is no longer held for it. */
  settled: (messageId: string) => void;
  logger: Logger;
  /** How long a committed message's id is remembered, for a claim read before the commit. */
  rememberMs: number;
}

export class DeferredOutcomes {
  readonly #options: DeferredOutcomesOptions;
  readonly #entries = new Map<string, Entry>();
  /** Ids committed from here lately → until when they are remembered. */
  readonly #recent = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #retryMs = FIRST_RETRY_MS;
  #flushing: Promise<void> | undefined;
  /** Counters, for the metrics. */
  kept = 0;
  givenUpFull = 0;
  givenUpFailing = 0;

  constructor(options: DeferredOutcomesOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Whether this process holds the message's outcome, or committed it from here lately. */
  holds(messageId: string, now = Date.now()): boolean {
    if (this.#entries.has(messageId)) return true;
    const until = this.#recent.get(messageId);
    if (until === undefined) return false;
    if (until > now) return true;
    this.#recent.delete(messageId);
    return false;
  }

  /** Keeps an outcome whose commit failed; false when there is no room (the caller gives it up). */
  keep(message: MessageRow, outcome: SendOutcome): boolean {
    if (!this.#entries.has(message.id) && this.#entries.size >= this.#options.limit) {
      this.givenUpFull++;
      return false;
    }
    if (this.#entries.size === 0) {
      this.#options.logger.warn('the database cannot take send outcomes; keeping them to commit when it is back');
    }
    this.#entries.set(message.id, { message, outcome, otherFailures: 0 });
    this.kept++;
    this.#schedule();
    return true;
  }

  /** Tries to commit everything kept, once. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flushOnce().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  /** Stops retrying; what is still kept stays uncommitted (its leases run out). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#timer || this.#entries.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush().then(() => this.#schedule());
    }, this.#retryMs);
  }

  async #flushOnce(): Promise<void> {
    const entries = [...this.#entries.values()];
    if (entries.length === 0) return;
    let committed = 0;
    await Promise.all(
      entries.map(async (entry) => {
        const id = entry.message.id;
        try {
          await this.#options.record(entry.message, entry.outcome);
          committed++;
          this.#settle(id);
          this.#recent.set(id, Date.now() + this.#options.rememberMs);
        } catch (error) {
          if (isDatabaseUnavailable(error) || ++entry.otherFailures < MAX_OTHER_FAILURES) return;
          this.givenUpFailing++;
          this.#settle(id);
          this.#options.logger.error({ err: error, messageId: id }, 'recording a send outcome failed; its lease will run out and it will be sent again');
        }
      }),
    );
    this.#retryMs = committed > 0 ? FIRST_RETRY_MS : Math.min(MAX_RETRY_MS, this.#retryMs * 2);
    if (committed > 0 && this.#entries.size === 0) {
      this.#options.logger.info({ committed }, 'kept send outcomes committed');
    }
    const now = Date.now();
    for (const [id, until] of this.#recent) if (until <= now) this.#recent.delete(id);
  }

  #settle(messageId: string): void {
    this.#entries.delete(messageId);
    this.#options.settled(messageId);
  }
}
