// Webhook attempts in flight in this process, and how the free slots are shared out.
//
// Attempts are bounded overall and per receiver origin. Free slots are dealt round-robin, one
// per project per round, so no project takes them all. A quarter of the slots, overall and at
// each origin, is kept for projects with nothing in flight: a project whose receiver is slow
// fills only its share, and a newcomer always finds a slot without waiting for anyone's attempt
// to end.

export interface WebhookDeliveryLimits {
  /** Attempts in flight in this process. */
  maxInFlight: number;
  /** Attempts in flight in this process to one receiver origin. */
  maxPerOrigin: number;
}

export const DEFAULT_WEBHOOK_LIMITS: WebhookDeliveryLimits = { maxInFlight: 256, maxPerOrigin: 16 };

/** The most attempts one project has in flight: its origin's bound, less the newcomers' reserve. */
export function perProjectLimit(limits: WebhookDeliveryLimits): number {
  return limits.maxPerOrigin - Math.floor(limits.maxPerOrigin / 4);
}

export interface SlotRequest {
  projectId: string;
  /** Where the project's deliveries go (its callback URL's origin). */
  origin: string;
  /** The most attempts its origin may start now (its circuit: unlimited, 1 to probe, or 0). */
  allowance: number;
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
}

export class WebhookSlots {
  readonly #limits: WebhookDeliveryLimits;
  readonly #reserve: number;
  readonly #originReserve: number;
  readonly #perProject: number;
  readonly #byOrigin = new Map<string, number>();
  readonly #byProject = new Map<string, number>();
  #total = 0;

  constructor(limits: WebhookDeliveryLimits) {
    this.#limits = limits;
    this.#reserve = Math.floor(limits.maxInFlight / 4);
    this.#originReserve = Math.floor(limits.maxPerOrigin / 4);
    this.#perProject = perProjectLimit(limits);
  }

  get inFlight(): number {
    return this.#total;
  }

  get full(): boolean {
    return this.#total >= this.#limits.maxInFlight;
  }

  /** Slots free now, overall. */
  get free(): number {
    return Math.max(0, this.#limits.maxInFlight - this.#total);
  }

  take(projectId: string, origin: string): void {
    this.#total++;
    bump(this.#byOrigin, origin, 1);
    bump(this.#byProject, projectId, 1);
  }

  give(projectId: string, origin: string): void {
    this.#total--;
    bump(this.#byOrigin, origin, -1);
    bump(this.#byProject, projectId, -1);
  }

  /** Deals the free slots to the requests, in their order, one per project per round. */
  share(requests: readonly SlotRequest[]): Map<string, number> {
    const byOrigin = new Map(this.#byOrigin);
    const byProject = new Map(this.#byProject);
    const dealt = new Map<string, number>();
    const quotas = new Map<string, number>();
    let total = this.#total;
    let progress = true;
    while (progress) {
      progress = false;
      for (const request of requests) {
        const { projectId, origin } = request;
        if ((dealt.get(origin) ?? 0) >= request.allowance) continue;
        if (!this.#grantable(total, byOrigin.get(origin) ?? 0, byProject.get(projectId) ?? 0)) continue;
        total++;
        bump(byOrigin, origin, 1);
        bump(byProject, projectId, 1);
        bump(dealt, origin, 1);
        bump(quotas, projectId, 1);
        progress = true;
      }
    }
    return quotas;
  }

  #grantable(total: number, atOrigin: number, ofProject: number): boolean {
    const { maxInFlight, maxPerOrigin } = this.#limits;
    if (total >= maxInFlight || atOrigin >= maxPerOrigin || ofProject >= this.#perProject) return false;
    if (ofProject === 0) return true;
    return maxInFlight - total > this.#reserve && maxPerOrigin - atOrigin > this.#originReserve;
  }
}
