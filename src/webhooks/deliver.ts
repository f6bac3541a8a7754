import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Agent } from 'undici';
import { signWebhook } from '../domain/webhookSignature.ts';
import { bareHost, forbiddenAddressReason, guardedLookup } from '../net/addressPolicy.ts';
import { undici } from '../net/undici.ts';

// One webhook attempt: a signed POST to the callback URL through a shared keep-alive pool.
//
// Glossary
// - acknowledged: the receiver answered 2xx within the timeout.
// - refused:      svc did not send at all: the URL is not one svc may call (not https, or its
//                 host is or resolves to a private, loopback, link-local… address). Nothing went
//                 on the wire, and trying again later would be refused again.
// - interrupted:  svc itself cut the attempt short (shutdown).

export const USER_AGENT = 'Service/1.0';
/** How much of a receiver's answer is kept in the attempt log. */
export const RESPONSE_BODY_LIMIT = 1024;

export type AttemptOutcome =
  | 'acknowledged'
  | 'http_error'
  | 'redirect'
  | 'timeout'
  | 'network_error'
  | 'refused'
  | 'interrupted';

export interface AttemptResult {
  outcome: AttemptOutcome;
  statusCode?: number;
  durationMs: number;
  error?: string;
  /** The first 1 KiB of the answer, as text. */
  responseBody?: string;
  /** From a Retry-After header. */
  retryAfter?: string;
}

export interface WebhookRequest {
  url: string;
  deliveryId: string;
  attempt: number;
  event: string;
  body: string;
  /** The project's live `whsec_` secrets, current first. Never logged. */
  secrets: readonly string[];
}

export interface WebhookSenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Connections kept per origin; the worker bounds requests in flight per origin to the same. */
  connectionsPerOrigin: number;
}

/** Why svc must not call this URL at all, or undefined when it may try. */
export function refusedUrlReason(url: URL, allowPrivate: boolean): string | undefined {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${url.protocol} URLs are not supported`;
  // Literal IPs are checked here: the connection does not look them up, so the guarded lookup
  // never sees them. (WHATWG URL parsing has already normalised 0x7f.1, 2130706433 and the like.)
  const host = bareHost(url.hostname);
  if (!allowPrivate && ipaddr.isValid(host)) {
    const reason = forbiddenAddressReason(host);
    if (reason) return `refused: ${reason}`;
  }
  if (url.protocol === 'http:' && !allowPrivate) return 'refused: callback URLs must use https';
  if (url.username !== '' || url.password !== '') return 'refused: callback URLs must not carry credentials';
  return undefined;
}

function isForbiddenAddressError(error: unknown, depth = 0): error is Error {
  if (!(error instanceof Error) || depth > 5) return false;
  if ((error as { code?: string }).code === 'forbidden_address') return true;
  if (error instanceof AggregateError && error.errors.some((inner) => isForbiddenAddressError(inner, depth + 1))) {
    return true;
  }
  return isForbiddenAddressError(error.cause, depth + 1);
}

function forbiddenMessage(error: unknown, depth = 0): string {
  if (error instanceof Error && (error as { code?: string }).code === 'forbidden_address') return error.message;
  if (error instanceof AggregateError) {
    for (const inner of error.errors) if (isForbiddenAddressError(inner)) return forbiddenMessage(inner, depth + 1);
  }
  if (error instanceof Error && depth < 5) return forbiddenMessage(error.cause, depth + 1);
  return 'the address is not allowed';
}

function describeNetworkError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    const code = (current as { code?: string }).code;
    const text = current.message || current.name;
    parts.push(code && !text.includes(code) ? `${code}: ${text}` : text);
    current = current.cause;
  }
  return parts.join(' ← ').slice(0, 500) || 'connection failed';
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Reads at most RESPONSE_BODY_LIMIT bytes of a body, then drops the rest. */
async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_BODY_LIMIT) break;
    }
  } catch {
    // A body cut short still leaves what arrived.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8');
}

/**
 * Sends webhooks. One keep-alive pool for every receiver; its connections are made only to
 * addresses the SSRF policy allows, and go to the very address that was checked.
 */
export class WebhookSender {
  #agent: Agent | undefined;
  readonly #options: WebhookSenderOptions;

  constructor(options: WebhookSenderOptions) {
    this.#options = options;
  }

  /** The pool, made on the first attempt. */
  #pool(): Agent {
    const options = this.#options;
    return (this.#agent ??= new (undici().Agent)({
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: {
        timeout: options.timeoutMs,
        lookup: guardedLookup(options.allowPrivate) as unknown as LookupFunction,
      },
    }));
  }

  /** One attempt. Never throws: every outcome is a result to record. */
  async send(webhook: WebhookRequest, stop: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      url = new URL(webhook.url);
    } catch {
      return { outcome: 'refused', durationMs: 0, error: 'refused: the callback URL is not a valid URL' };
    }
    const refusal = refusedUrlReason(url, this.#options.allowPrivate);
    if (refusal) return { outcome: 'refused', durationMs: 0, error: refusal };

    const timestamp = Math.floor(Date.now() / 1000);
    const timeout = AbortSignal.timeout(this.#options.timeoutMs);
    const signal = AbortSignal.any([timeout, stop]);
    try {
      const response = await undici().request(url, {
        dispatcher: this.#pool(),
        method: 'POST',
        signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-service-event': webhook.event,
          'x-service-delivery': webhook.deliveryId,
          'x-service-delivery-attempt': String(webhook.attempt),
          'webhook-id': webhook.deliveryId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(webhook.secrets, webhook.deliveryId, timestamp, webhook.body),
        },
        body: webhook.body,
      });
      const statusCode = response.statusCode;
      const responseBody = await readPrefix(response.body);
      const result: AttemptResult = { outcome: 'acknowledged', statusCode, durationMs: elapsed(), responseBody };
      if (statusCode >= 200 && statusCode < 300) return result;
      const retryAfter = headerValue(response.headers['retry-after']);
      if (retryAfter !== undefined) result.retryAfter = retryAfter;
      if (statusCode >= 300 && statusCode < 400) {
        const location = headerValue(response.headers.location);
        result.outcome = 'redirect';
        result.error = `HTTP ${statusCode}: redirects are not followed${location ? ` (Location: ${location.slice(0, 300)})` : ''}`;
      } else {
        result.outcome = 'http_error';
        result.error = `HTTP ${statusCode}: not a 2xx answer`;
      }
      return result;
    } catch (error) {
      const durationMs = elapsed();
      if (stop.aborted) return { outcome: 'interrupted', durationMs, error: 'interrupted: svc was shutting down' };
      if (isForbiddenAddressError(error)) {
        return { outcome: 'refused', durationMs, error: `refused: ${forbiddenMessage(error)}` };
      }
      if (timeout.aborted || (error as { code?: string }).code?.includes('TIMEOUT')) {
        return { outcome: 'timeout', durationMs, error: `timeout: no answer within ${this.#options.timeoutMs} ms` };
      }
      return { outcome: 'network_error', durationMs, error: describeNetworkError(error) };
    }
  }

  async close(): Promise<void> {
    await this.#agent?.destroy();
  }
}
