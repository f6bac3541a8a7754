import createClient, { type Client } from 'openapi-fetch';
import { SvcError } from './errors.ts';
import { nextLink, queryOf } from './pagination.ts';
import { type RetryOptions, retryingFetch } from './retry.ts';
import type { paths } from './schema.ts';
import type { PagedItem, PagedPath, PagedQuery } from './types.ts';

export interface SvcClientOptions {
  /** Where svc answers, e.g. `http://127.0.0.1:8080` (no trailing /v1). */
  baseUrl: string;
  /** An API key (`svc_live_…`), sent as `Authorization: Bearer`. Only POST /v1/projects works without. */
  apiKey?: string | undefined;
  /** Retries of 429 and 503 answers (honouring Retry-After); `false` turns them off. */
  retry?: RetryOptions | false | undefined;
  /** Headers sent with every request. */
  headers?: Record<string, string> | undefined;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: ((request: Request) => Promise<Response>) | undefined;
}

/** The generated, typed client (openapi-fetch) plus paginate(). */
export type SvcClient = Client<paths> & {
  /**
   * Every item of a paged list, page after page, following the `Link: <…>; rel="next"` header:
   * `for await (const message of svc.paginate('/v1/messages', { query: { status: 'READ' } }))`.
   * An error answer is thrown as an SvcError.
   */
  paginate<P extends PagedPath>(
    path: P,
    options?: { query?: PagedQuery<P> | undefined; signal?: AbortSignal | undefined },
  ): AsyncIterableIterator<PagedItem<P>>;
};

// Sends get an Idempotency-Key unless the caller gave one, so that a retry (ours, or the
// caller's with the same key) can never send twice.
const SEND_PATHS = ['/v1/messages', '/v1/messages/batch'];

function withIdempotencyKey(
  fetchOnce: (request: Request) => Promise<Response>,
  basePath: string,
): (request: Request) => Promise<Response> {
  return (request) => {
    if (request.method === 'POST' && !request.headers.has('idempotency-key')) {
      const path = new URL(request.url).pathname.slice(basePath.length);
      if (SEND_PATHS.includes(path)) request.headers.set('idempotency-key', crypto.randomUUID());
    }
    return fetchOnce(request);
  };
}

export function createSvcClient(options: SvcClientOptions): SvcClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchOnce = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const retried = options.retry === false ? fetchOnce : retryingFetch(fetchOnce, options.retry);
  const client = createClient<paths>({
    baseUrl,
    fetch: withIdempotencyKey(retried, new URL(baseUrl).pathname.replace(/\/$/, '')),
    headers: {
      ...options.headers,
      ...(options.apiKey !== undefined && { authorization: `Bearer ${options.apiKey}` }),
    },
  });

  async function* paginate<P extends PagedPath>(
    path: P,
    pageOptions: { query?: PagedQuery<P> | undefined; signal?: AbortSignal | undefined } = {},
  ): AsyncIterableIterator<PagedItem<P>> {
    let query: Record<string, unknown> | undefined = pageOptions.query;
    for (;;) {
      // The paged paths' GETs differ only in their query; one loose call serves them all.
      const get = client.GET as (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
      const result = await get(path, { params: { query }, signal: pageOptions.signal });
      if (result.error !== undefined || !result.response.ok) throw new SvcError(result.response, result.error);
      yield* result.data as PagedItem<P>[];
      const next = nextLink(result.response.headers.get('link'));
      if (next === undefined) return;
      query = queryOf(next);
    }
  }

  return Object.assign(client, { paginate });
}
