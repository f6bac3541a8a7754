export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until the next request would be allowed (0 when allowed). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** A token bucket per client: `perMinute` requests in a burst, refilled evenly over a minute. */
export class RateLimiter {
  readonly #perMinute: number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(perMinute: number) {
    this.#perMinute = perMinute;
  }

  take(client: string, now: number = Date.now()): RateDecision {
    const perMs = this.#perMinute / 60_000;
    const bucket = this.#buckets.get(client) ?? { tokens: this.#perMinute, updatedAt: now };
    bucket.tokens = Math.min(this.#perMinute, bucket.tokens + (now - bucket.updatedAt) * perMs);
    bucket.updatedAt = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.#buckets.delete(client); // re-insert so the map stays ordered by last use
    this.#buckets.set(client, bucket);
    this.#evictIdle(now);
    return {
      allowed,
      limit: this.#perMinute,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((this.#perMinute - bucket.tokens) / perMs / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)),
    };
  }

  /** Full buckets carry no state; drop the least recently used once they are a minute idle. */
  #evictIdle(now: number): void {
    for (const [client, bucket] of this.#buckets) {
      if (now - bucket.updatedAt < 60_000 && this.#buckets.size < 100_000) return;
      this.#buckets.delete(client);
    }
  }
}

/** The IETF RateLimit and RateLimit-Policy fields (draft-ietf-httpapi-ratelimit-headers). */
export function rateLimitHeaders(policy: string, decision: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'ratelimit-policy': `"${policy}";q=${decision.limit};w=60`,
    ratelimit: `"${policy}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
  if (!decision.allowed) headers['retry-after'] = String(decision.retryAfterSeconds);
  return headers;
}
