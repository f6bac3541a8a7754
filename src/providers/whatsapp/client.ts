import type { Agent } from 'undici';
import { undici } from '../../net/undici.ts';

// A small client for Meta's Graph API: one keep-alive pool, a deadline per call, and answers
// returned as values (never thrown) so callers can map them to outcomes.

/**
 * The error object of a Graph API error answer (`{ error: {…} }`). Its `error_subcode` is left
 * out on purpose: deprecated, and not returned since v16.
 */
export interface GraphErrorBody {
  message?: string;
  type?: string;
  code?: number;
  error_user_title?: string;
  error_user_msg?: string;
  error_data?: { messaging_product?: string; details?: string };
  fbtrace_id?: string;
}

export type GraphFailure =
  | { kind: 'timeout' }
  | { kind: 'network'; detail: string }
  | { kind: 'http'; status: number; error: GraphErrorBody | undefined; retryAfterMs: number | undefined };

export type GraphResult<T> = { ok: true; status: number; body: T } | { ok: false; failure: GraphFailure };

export interface GraphCall {
  method: 'GET' | 'POST' | 'DELETE';
  /** After the version, e.g. `/1065550001/messages`. */
  path: string;
  accessToken: string;
  query?: Record<string, string>;
  body?: unknown;
  /** Bytes sent as they are (an upload), instead of a JSON body. */
  bytes?: Uint8Array;
  /** The Authorization header's scheme: Bearer (default), or OAuth as the Resumable Upload API asks. */
  scheme?: 'Bearer' | 'OAuth';
  headers?: Record<string, string>;
}

export interface GraphClientOptions {
  /** Base URL without the version, e.g. https://graph.facebook.com. */
  graphUrl: string;
  apiVersion: string;
  timeoutMs: number;
}

const USER_AGENT = 'svc-whatsapp/1.0';

/** Seconds or an HTTP date, as Retry-After allows; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function describe(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  return [code, message].filter(Boolean).join(': ') || 'network error';
}

export class GraphClient {
  #agent: Agent | undefined;
  readonly #base: string;
  readonly #timeoutMs: number;

  constructor(options: GraphClientOptions) {
    this.#base = `${options.graphUrl.replace(/\/+$/, '')}/${options.apiVersion}`;
    this.#timeoutMs = options.timeoutMs;
  }

  /** The pool, made on the first call. */
  #pool(): Agent {
    // No cap on connections here: the dispatcher bounds the calls in flight, and at Graph's real
    // latencies a number at its throughput needs as many connections as it has calls waiting.
    return (this.#agent ??= new (undici().Agent)({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      connect: { timeout: this.#timeoutMs },
    }));
  }

  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  async call<T>(call: GraphCall): Promise<GraphResult<T>> {
    const url = new URL(this.#base + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value);
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    try {
      const response = await undici().request(url, {
        dispatcher: this.#pool(),
        method: call.method,
        signal: timeout,
        headers: {
          authorization: `${call.scheme ?? 'Bearer'} ${call.accessToken}`,
          'user-agent': USER_AGENT,
          accept: 'application/json',
          ...(call.body !== undefined && { 'content-type': 'application/json' }),
          ...call.headers,
        },
        ...(call.body !== undefined && { body: JSON.stringify(call.body) }),
        ...(call.bytes !== undefined && { body: call.bytes }),
      });
      const text = await response.body.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (response.statusCode >= 200 && response.statusCode < 300) {
        return { ok: true, status: response.statusCode, body: parsed as T };
      }
      const error = (parsed as { error?: GraphErrorBody } | undefined)?.error;
      return {
        ok: false,
        failure: {
          kind: 'http',
          status: response.statusCode,
          error: error !== null && typeof error === 'object' ? error : undefined,
          retryAfterMs: retryAfterMs(response.headers['retry-after']),
        },
      };
    } catch (error) {
      if (timeout.aborted || (error as { code?: string }).code?.includes('TIMEOUT')) {
        return { ok: false, failure: { kind: 'timeout' } };
      }
      return { ok: false, failure: { kind: 'network', detail: describe(error) } };
    }
  }

  async close(): Promise<void> {
    await this.#agent?.close();
  }
}
