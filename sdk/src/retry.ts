// Retries of 429 and 503 answers. A 429 comes before any work (the rate limit), so any request may
// be sent again. A 503 may not: a database connection lost during a commit answers 503 although
// the commit may have applied, so a 503 is retried only for a request that is safe to repeat (a
// read, a PUT or DELETE, or a write carrying an Idempotency-Key). The wait is the server's Retry-After
// when it gives one, else an exponential backoff with jitter; a Retry-After longer than the
// caller allows is not waited out: the answer is returned as it is.

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retries off). */
  maxRetries?: number | undefined;
  /** The longest wait before one retry, in ms (default 30 000). */
  maxDelayMs?: number | undefined;
  /** The first backoff when the answer has no Retry-After, in ms (default 500; doubles each time). */
  baseDelayMs?: number | undefined;
}

const SAFE_TO_REPEAT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

function retryable(request: Request, status: number): boolean {
  if (status === 429) return true;
  if (status !== 503) return false;
  return SAFE_TO_REPEAT.has(request.method) || request.headers.has('idempotency-key');
}

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

/** Wraps a fetch so that 429 answers, and 503 answers to repeatable requests, are retried as described above. */
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
      if (last || !retryable(request, response.status)) return response;
      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2);
      const delay = retryAfterMs(response.headers.get('retry-after')) ?? backoff;
      if (delay > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}
