// Retries of 429 and 503 answers, which svc gives before doing any work (rate limit, shutdown,
// database unreachable), so any request may be sent again. The wait is the server's Retry-After
// when it gives one, else an exponential backoff with jitter; a Retry-After longer than the
// caller allows is not waited out: the answer is returned as it is.

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retries off). */
  maxRetries?: number;
  /** The longest wait before one retry, in ms (default 30 000). */
  maxDelayMs?: number;
  /** The first backoff when the answer has no Retry-After, in ms (default 500; doubles each time). */
  baseDelayMs?: number;
}

const RETRYABLE = new Set([429, 503]);

/** A Retry-After value (seconds or an HTTP date) in ms from `now`; undefined when unreadable. */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Wraps a fetch so that 429 and 503 answers are retried as described above. */
export function retryingFetch(
  fetchOnce: (request: Request) => Promise<Response>,
  options: RetryOptions = {},
): (request: Request) => Promise<Response> {
  const maxRetries = options.maxRetries ?? 3;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const baseDelayMs = options.baseDelayMs ?? 500;
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= maxRetries;
      // A body can be read once: every attempt but the last sends a copy.
      const response = await fetchOnce(last ? request : request.clone());
      if (last || !RETRYABLE.has(response.status)) return response;
      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2);
      const delay = retryAfterMs(response.headers.get('retry-after')) ?? backoff;
      if (delay > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}
