import type { WebhookEvent } from './types.ts';

// Standard Webhooks (https://www.standardwebhooks.com) for receivers of svc's webhooks: a request
// is genuine when one of its `webhook-signature` entries is "v1," + base64(HMAC-SHA256(key,
// "<webhook-id>.<webhook-timestamp>.<body>")), the key being the bytes of the `whsec_` secret,
// and its timestamp is recent. Web Crypto only, so it runs in Node and in browsers.

const SECRET_PREFIX = 'whsec_';
const encoder = new TextEncoder();

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** Request headers as fetch, Node's http module or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

function base64ToBytes(value: string): Uint8Array<ArrayBuffer> {
  const standard = value.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(standard + '='.repeat((4 - (standard.length % 4)) % 4));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function signingKey(secret: string) {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  let key: Uint8Array<ArrayBuffer>;
  try {
    key = base64ToBytes(encoded);
  } catch {
    throw new TypeError('The webhook secret is not a whsec_ secret (base64 after the prefix).');
  }
  if (key.length === 0) throw new TypeError('The webhook secret is empty.');
  return crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

function signedContent(id: string, timestamp: string, payload: string | Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const body = typeof payload === 'string' ? encoder.encode(payload) : payload;
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  return content;
}

async function mac(secret: string, content: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', await signingKey(secret), content));
}

/** Compares in time that depends only on the lengths, not on where the bytes differ. */
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

export interface SignWebhookOptions {
  /** The `whsec_` secret (GET /v1/projects/me/webhook-secret). */
  secret: string;
  /** The `webhook-id` header value. */
  id: string;
  /** The `webhook-timestamp`: seconds since the epoch. */
  timestamp: number;
  /** The exact body bytes (or their UTF-8 text). */
  payload: string | Uint8Array;
}

/** The `webhook-signature` value for one request: `v1,<base64>` (e.g. to re-sign a forwarded event). */
export async function signWebhook(options: SignWebhookOptions): Promise<string> {
  const content = signedContent(options.id, String(options.timestamp), options.payload);
  return `v1,${bytesToBase64(await mac(options.secret, content))}`;
}

export interface VerifyWebhookOptions {
  /** The raw request body, exactly as received: parse it only after verifying. */
  payload: string | Uint8Array;
  headers: WebhookHeaders;
  /** The project's `whsec_` secret; during a rotation, both the new and the old one. */
  secret: string | readonly string[];
  /** How far `webhook-timestamp` may be from now, either way (default 300 s). */
  toleranceSeconds?: number | undefined;
  /** The current time in ms (default Date.now()); for tests. */
  now?: number | undefined;
}

/**
 * Checks a webhook request's signature and timestamp; resolves with the parsed body, or rejects
 * with a WebhookVerificationError. Deduplicate deliveries by the `webhook-id` header.
 */
export async function verifyWebhook<T = WebhookEvent>(options: VerifyWebhookOptions): Promise<T> {
  const id = header(options.headers, 'webhook-id');
  const timestamp = header(options.headers, 'webhook-timestamp');
  const signatures = header(options.headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header.');
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('The webhook-timestamp is not a number of seconds.');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError('The webhook-timestamp is too far from now (a replay, or a skewed clock).');
  }
  const given: Uint8Array[] = [];
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    try {
      given.push(base64ToBytes(value));
    } catch {
      // Not base64: it matches nothing.
    }
  }
  const content = signedContent(id, timestamp, options.payload);
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  for (const secret of secrets) {
    const expected = await mac(secret, content);
    if (given.some((signature) => equalBytes(signature, expected))) {
      const text = typeof options.payload === 'string' ? options.payload : new TextDecoder().decode(options.payload);
      return JSON.parse(text) as T;
    }
  }
  throw new WebhookVerificationError('No webhook-signature matches the secret.');
}
