import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { bareHost, forbiddenAddressReason, guardedLookup } from './addressPolicy.ts';
import { undici } from './undici.ts';

// Downloads a file a customer names (a template's media sample) under the SSRF rules of the
// webhook client (CONTRACT §6): https only, public addresses only — checked as the connection is
// made, so DNS rebinding gains nothing —, no redirects followed, a deadline, and a size cap read as
// the bytes arrive (a server's Content-Length is not trusted). SVC_ALLOW_PRIVATE_CALLBACKS lifts
// the address and https rules, for development and tests.

export interface DownloadOptions {
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
}

export interface Downloaded {
  contentType: string | undefined;
  bytes: Uint8Array;
}

/** Why a download failed, in words a customer can act on. */
export class DownloadError extends Error {
  override name = 'DownloadError';
  /** `too_large`, `unreachable`, `refused`, `http_status`, `timeout`. */
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

function refusal(url: URL, allowPrivate: boolean): string | undefined {
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'it must be an https URL';
  if (url.username !== '' || url.password !== '') return 'it must not carry credentials';
  const host = bareHost(url.hostname);
  if (!allowPrivate && ipaddr.isValid(host)) {
    const reason = forbiddenAddressReason(host);
    if (reason) return `it must point to a public address, and ${reason}`;
  }
  return undefined;
}

function isForbiddenAddress(error: unknown, depth = 0): error is Error {
  if (!(error instanceof Error) || depth > 5) return false;
  if ((error as { code?: string }).code === 'forbidden_address') return true;
  return isForbiddenAddress((error as { cause?: unknown }).cause, depth + 1);
}

export async function guardedDownload(raw: string, options: DownloadOptions): Promise<Downloaded> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DownloadError('refused', 'it is not a URL');
  }
  const refused = refusal(url, options.allowPrivate);
  if (refused) throw new DownloadError('refused', refused);
  const agent = new (undici().Agent)({
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: { timeout: options.timeoutMs, lookup: guardedLookup(options.allowPrivate) as unknown as LookupFunction },
  });
  const timeout = AbortSignal.timeout(options.timeoutMs);
  try {
    const response = await undici().request(url, {
      dispatcher: agent,
      method: 'GET',
      signal: timeout,
      headers: { 'user-agent': 'svc-media-sample/1.0', accept: '*/*' },
    });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await response.body.dump();
      const redirect = response.statusCode >= 300 && response.statusCode < 400 ? ' (redirects are not followed)' : '';
      throw new DownloadError('http_status', `it answered HTTP ${response.statusCode}${redirect}`);
    }
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      await response.body.destroy();
      throw new DownloadError('too_large', `it is ${declared} bytes, over the limit of ${options.maxBytes}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > options.maxBytes) {
        response.body.destroy();
        throw new DownloadError('too_large', `it is over the limit of ${options.maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    const type = response.headers['content-type'];
    return { contentType: Array.isArray(type) ? type[0] : type, bytes: new Uint8Array(Buffer.concat(chunks)) };
  } catch (error) {
    if (error instanceof DownloadError) throw error;
    if (isForbiddenAddress(error)) throw new DownloadError('refused', `it must point to a public address: ${error.message}`);
    if (timeout.aborted || (error as { code?: string }).code?.includes('TIMEOUT')) {
      throw new DownloadError('timeout', `it did not answer within ${options.timeoutMs / 1000} s`);
    }
    throw new DownloadError('unreachable', 'it could not be reached');
  } finally {
    void agent.close().catch(() => undefined);
  }
}
