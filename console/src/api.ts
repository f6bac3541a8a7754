import { createSvcClient, nextLink, SvcError, type SvcClient } from '#sdk';

// The console's one door to svc: the SDK's client, on the origin that served the console, with
// the signed-in key. Pages ask it for data and get SvcError for error answers.

export { SvcError };

/** A page of a list and the cursor of the next one (from the Link header), if any. */
export interface Page<T> {
  items: T[];
  nextCursor: string | undefined;
}

type Query = Record<string, string | number | boolean | undefined>;
type Call = (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export interface Api {
  readonly client: SvcClient;
  get<T>(path: string, query?: Query): Promise<T>;
  page<T>(path: string, query?: Query): Promise<Page<T>>;
  post<T>(path: string, body?: unknown): Promise<T>;
  put<T>(path: string, body: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  del<T>(path: string): Promise<T>;
}

function cleanQuery(query: Query | undefined): Query | undefined {
  if (!query) return undefined;
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined && value !== ''));
}

/** A path segment from a value: ids and phone numbers go in the path encoded. */
export const seg = (value: string): string => encodeURIComponent(value);

/**
 * The API as the signed-in key sees it. `onUnauthorized` runs on any 401 (a revoked key, a
 * disabled project), so the console can sign out instead of showing broken pages.
 */
export function createApi(apiKey: string, onUnauthorized: () => void): Api {
  const client = createSvcClient({ baseUrl: location.origin, apiKey, retry: { maxRetries: 2, maxDelayMs: 5000 } });
  // Paths are built by the pages (some belong to endpoints newer than the SDK's types): the
  // typed methods are called loosely, and answers are typed by the page that asked.
  const method = (name: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE') => client[name] as unknown as Call;

  async function answer(call: ReturnType<Call>) {
    const result = await call;
    if (result.error !== undefined || !result.response.ok) {
      const error = new SvcError(result.response, result.error);
      if (error.status === 401) onUnauthorized();
      throw error;
    }
    return result;
  }

  return {
    client,
    async get(path, query) {
      return (await answer(method('GET')(path, { params: { query: cleanQuery(query) } }))).data as never;
    },
    async page(path, query) {
      const result = await answer(method('GET')(path, { params: { query: cleanQuery(query) } }));
      const next = nextLink(result.response.headers.get('link'));
      return {
        items: result.data as never[],
        nextCursor: next === undefined ? undefined : (new URL(next, location.origin).searchParams.get('cursor') ?? undefined),
      };
    },
    async post(path, body) {
      return (await answer(method('POST')(path, body === undefined ? {} : { body }))).data as never;
    },
    async put(path, body) {
      return (await answer(method('PUT')(path, { body }))).data as never;
    },
    async patch(path, body) {
      return (await answer(method('PATCH')(path, { body }))).data as never;
    },
    async del(path) {
      return (await answer(method('DELETE')(path, {}))).data as never;
    },
  };
}

/** Creating a project is the one call without a key. */
export async function createProject(name: string, ownerEmail: string): Promise<{ projectId: string; apiKey: string }> {
  const client = createSvcClient({ baseUrl: location.origin, retry: false });
  const result = await client.POST('/v1/projects', { body: { name, ownerEmail } });
  if (result.error !== undefined || !result.response.ok) throw new SvcError(result.response, result.error);
  return result.data;
}

/** Whether an error means "this server has no such endpoint (yet)". */
export function isMissingEndpoint(error: unknown): boolean {
  if (!(error instanceof SvcError)) return false;
  // The router's own 404 ("No route GET /v1/…"), not a missing record; a 405 is a path that
  // exists for other methods only.
  return error.status === 405 || (error.status === 404 && (error.problem?.detail ?? 'No route').startsWith('No route'));
}
