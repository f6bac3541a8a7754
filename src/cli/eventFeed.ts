import type { Session } from './api.ts';
import { parseDuration } from './waiting.ts';

// Follows GET /v1/events: the project's webhook events as they happen. Event ids sort by the
// time they were made, but one made earlier may commit a little later than one already read; so
// each poll reads again from LOOKBACK_MS back (never before the start) and skips ids it has seen.

export interface FeedEvent {
  id: string;
  type: string;
  occurredAt: string;
  payload: Record<string, unknown>;
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
export const LOOKBACK_MS = 15_000;
const PAGE = 200;

/** The smallest event id made at or after `ms` (ids: evt_ + 10 characters of time + 16 random). */
export function eventIdAt(ms: number): string {
  let time = '';
  let rest = Math.max(0, Math.floor(ms));
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  return `evt_${time}${'0'.repeat(16)}`;
}

/** The time an id was made at (its 10 time characters), or 0 when unreadable. */
export function timeOfId(id: string): number {
  const time = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11);
  let ms = 0;
  for (const char of time) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return 0;
    ms = ms * 32 + digit;
  }
  return ms;
}

/** A project's events made from `sinceMs` on: each poll() gives those not given before, in order. */
export class EventFeed {
  readonly #api: Session;
  readonly #start: string;
  readonly #seen = new Map<string, number>();
  #newest: string;

  constructor(api: Session, sinceMs: number) {
    this.#api = api;
    this.#start = eventIdAt(sinceMs);
    this.#newest = this.#start;
  }

  async poll(): Promise<FeedEvent[]> {
    const lookback = eventIdAt(Date.now() - LOOKBACK_MS);
    const lower = this.#newest < lookback ? this.#newest : lookback;
    let after = lower < this.#start ? this.#start : lower;
    const fresh: FeedEvent[] = [];
    for (;;) {
      const page: FeedEvent[] = await this.#api.call(this.#api.svc.GET('/v1/events', { params: { query: { after, limit: PAGE } } }));
      for (const event of page) {
        if (this.#seen.has(event.id)) continue;
        this.#seen.set(event.id, timeOfId(event.id));
        if (event.id > this.#newest) this.#newest = event.id;
        fresh.push(event);
      }
      if (page.length < PAGE) break;
      after = page.at(-1)!.id;
    }
    const forgetBefore = Date.now() - 2 * LOOKBACK_MS;
    for (const [id, time] of this.#seen) if (time < forgetBefore) this.#seen.delete(id);
    return fresh;
  }
}

/** "10m", "2h" back from now, or an ISO time, as epoch ms. */
export function sinceOf(text: string | undefined): number {
  if (text === undefined) return Date.now();
  const parsed = Date.parse(text);
  if (/^\d{4}-/.test(text) && !Number.isNaN(parsed)) return parsed;
  return Date.now() - parseDuration(text, '--since');
}
