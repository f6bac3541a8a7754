import type { WebhookCircuitRow } from '../db/webhookDeliveries.ts';
import type { AttemptResult } from '../webhooks/deliver.ts';

// Circuit breakers, one per receiver origin (scheme://host:port), kept by each worker process.
//
// - closed:    attempts go out as capacity allows; consecutive failed attempts are counted.
// - open:      after `threshold` of them in a row, nothing is claimed for the origin until
//              `retryAt` (the cool-down: the first wait of the retry schedule, doubled after
//              each failed probe, capped).
// - half-open: from `retryAt`, one attempt at a time probes the origin: a healthy answer closes
//              the circuit, a failure opens it again for a longer cool-down.
//
// Held deliveries are not attempts: they keep their due time and attempt count, so the retry
// schedule is unchanged; they are simply not claimed while the circuit is open. A process also
// adopts circuits that other processes opened (read from webhook_circuits), so a fresh process
// does not have to find a dead receiver out for itself.

/** What an attempt says about its receiver. */
export type Verdict = 'healthy' | 'failing' | 'neutral';

/**
 * Timeouts, connection errors, 5xx, 408 and 429 mean the receiver is down, overloaded or asking
 * for less: they count. Any other answer (2xx, 3xx, 4xx) came back promptly from a live receiver:
 * it cannot hold slots for long, and a 4xx is often about one payload, not the receiver. Refused
 * (never sent) and interrupted (svc cut it short) attempts say nothing about the receiver.
 */
export function verdictOf(result: AttemptResult): Verdict {
  switch (result.outcome) {
    case 'acknowledged':
    case 'redirect':
      return 'healthy';
    case 'http_error': {
      const status = result.statusCode ?? 500;
      return status >= 500 || status === 408 || status === 429 ? 'failing' : 'healthy';
    }
    case 'timeout':
    case 'network_error':
      return 'failing';
    default:
      return 'neutral';
  }
}

export interface CircuitOptions {
  /** Consecutive failed attempts that open the circuit. */
  threshold: number;
  /** The first cool-down; each failed probe doubles it. */
  baseCooldownMs: number;
  maxCooldownMs: number;
}

export type CircuitTransition =
  | { to: 'open'; row: WebhookCircuitRow; reopened: boolean }
  | { to: 'closed'; origin: string; openedAt: number };

/** How long a closed circuit is remembered, so that its stored row, not yet deleted, is not adopted. */
const FORGET_CLOSED_MS = 60_000;

interface OpenState {
  openedAt: number;
  retryAt: number;
  cooldownMs: number;
  probing: boolean;
  lastError: string | null;
}

interface Circuit {
  failures: number;
  open?: OpenState;
  /** When this process last changed it: a stored row older than that is stale news. */
  changedAt: number;
}

export class WebhookCircuits {
  readonly #options: CircuitOptions;
  readonly #circuits = new Map<string, Circuit>();

  constructor(options: CircuitOptions) {
    this.#options = options;
  }

  /** Origins whose circuit is open or half-open. */
  get openCount(): number {
    let count = 0;
    for (const circuit of this.#circuits.values()) if (circuit.open) count++;
    return count;
  }

  /** How many attempts the origin may start now: unlimited when closed, 1 to probe, else 0. */
  allowance(origin: string, now: number): number {
    const open = this.#circuits.get(origin)?.open;
    if (!open) return Number.POSITIVE_INFINITY;
    return open.probing || now < open.retryAt ? 0 : 1;
  }

  /** Until when a delivery to this origin waits (its circuit is open), or undefined if it need not. */
  heldUntil(origin: string, now: number): number | undefined {
    const open = this.#circuits.get(origin)?.open;
    if (!open || this.allowance(origin, now) > 0) return undefined;
    return open.retryAt > now ? open.retryAt : now + open.cooldownMs;
  }

  /** The earliest time a cooling-down circuit may be probed. */
  nextProbeAt(now: number): number | undefined {
    let next: number | undefined;
    for (const circuit of this.#circuits.values()) {
      const open = circuit.open;
      if (open && !open.probing && open.retryAt > now) next = Math.min(next ?? open.retryAt, open.retryAt);
    }
    return next;
  }

  /** One attempt is about to probe the origin; no other starts until it is judged. */
  beginProbe(origin: string): void {
    const open = this.#circuits.get(origin)?.open;
    if (open) open.probing = true;
  }

  /** Takes an attempt's verdict; returns the transition it caused, if any. */
  record(
    origin: string,
    verdict: Verdict,
    attempt: { probe: boolean; now: number; error?: string | undefined },
  ): CircuitTransition | undefined {
    const circuit = this.#circuits.get(origin);
    if (attempt.probe && circuit?.open) circuit.open.probing = false;
    if (verdict === 'neutral') return undefined;
    const { now } = attempt;
    if (verdict === 'healthy') {
      if (!circuit) return undefined;
      const open = circuit.open;
      circuit.failures = 0;
      circuit.open = undefined;
      if (!open) return undefined;
      circuit.changedAt = now;
      return { to: 'closed', origin, openedAt: open.openedAt };
    }
    const failing = circuit ?? { failures: 0, changedAt: now };
    this.#circuits.set(origin, failing);
    failing.failures++;
    const error = attempt.error ?? null;
    if (failing.open) {
      // Attempts that were in flight when it opened only add to the count; a failed probe
      // opens it again, for longer.
      failing.open.lastError = error;
      if (!attempt.probe) return undefined;
      const cooldownMs = Math.min(this.#options.maxCooldownMs, failing.open.cooldownMs * 2);
      Object.assign(failing.open, { retryAt: now + cooldownMs, cooldownMs });
      failing.changedAt = now;
      return { to: 'open', row: this.#rowOf(origin, failing), reopened: true };
    }
    if (failing.failures < this.#options.threshold) return undefined;
    const cooldownMs = this.#options.baseCooldownMs;
    failing.open = { openedAt: now, retryAt: now + cooldownMs, cooldownMs, probing: false, lastError: error };
    failing.changedAt = now;
    return { to: 'open', row: this.#rowOf(origin, failing), reopened: false };
  }

  /** Takes on circuits other processes opened and this one does not know of; returns their origins. */
  adopt(rows: readonly WebhookCircuitRow[], now: number): string[] {
    for (const [origin, circuit] of this.#circuits) {
      if (!circuit.open && circuit.failures === 0 && circuit.changedAt < now - FORGET_CLOSED_MS) {
        this.#circuits.delete(origin);
      }
    }
    const adopted: string[] = [];
    for (const row of rows) {
      const known = this.#circuits.get(row.origin);
      if (known?.open || (known && known.changedAt >= row.updated_at)) continue;
      this.#circuits.set(row.origin, {
        failures: row.failures,
        changedAt: row.updated_at,
        open: {
          openedAt: row.opened_at,
          retryAt: row.retry_at,
          cooldownMs: row.cooldown_ms,
          probing: false,
          lastError: row.last_error,
        },
      });
      adopted.push(row.origin);
    }
    return adopted;
  }

  #rowOf(origin: string, circuit: Circuit): WebhookCircuitRow {
    const open = circuit.open!;
    return {
      origin,
      opened_at: open.openedAt,
      retry_at: open.retryAt,
      cooldown_ms: open.cooldownMs,
      failures: circuit.failures,
      last_error: open.lastError,
      updated_at: circuit.changedAt,
    };
  }
}
