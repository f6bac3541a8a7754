import type { ProviderError } from '../provider.ts';
import type { GraphErrorBody, GraphFailure } from './client.ts';

// Graph API failures → send outcomes. Meta recommends deciding on `code` (not the HTTP status or
// the deprecated subcode), with `error_data.details` as the human explanation.

export type FailureClass =
  | { kind: 'transient'; error: ProviderError; retryAfterMs?: number }
  | { kind: 'permanent'; error: ProviderError };

/**
 * Codes worth retrying: throttling, Meta-side outages, and a rejected or under-privileged access
 * token (CONTRACT §5: a token rotated in time rescues queued messages).
 */
const TRANSIENT_CODES = new Set([
  // Authorization: AuthException, API method, permission denied, token invalid or expired.
  0, 3, 10, 190,
  // Temporary Graph errors: unknown, service.
  1, 2,
  // Throttling: API too many calls, WABA rate limit, Cloud API throughput, spam rate limit,
  // pair rate limit.
  4, 80007, 130429, 131048, 131056,
  // Something went wrong, service unavailable, business account in maintenance mode.
  131000, 131016, 131057,
  // Server temporarily unavailable.
  133004,
]);

/**
 * Codes that will fail the same way however often they are retried. Listed for the reader: any
 * other 4xx answer with a code is permanent too.
 */
export const PERMANENT_CODES = new Set([
  100, // invalid parameter
  470, // re-engagement (older API versions)
  131008, // required parameter missing
  131009, // parameter value invalid
  131026, // message undeliverable
  131030, // recipient not in the allowed list
  131031, // business account locked
  131047, // re-engagement message (outside the 24 h window)
  131051, // unsupported message type
  132000, // template parameter count mismatch
  132001, // template does not exist
  132005, // translated text too long
  132007, // template format character policy violated
  132012, // template parameter format mismatch
  132015, // template paused
  132016, // template disabled
  133010, // phone number not registered
]);

function isPermissionCode(code: number): boolean {
  return code >= 200 && code <= 299;
}

/** "(#131026) Message Undeliverable." → "Message Undeliverable." */
function titleOf(error: GraphErrorBody): string {
  const raw = error.error_user_title ?? error.message ?? 'Graph API error';
  return raw.replace(/^\(#\d+\)\s*/, '');
}

export function providerErrorOf(error: GraphErrorBody, fallbackCode: string): ProviderError {
  const title = titleOf(error);
  return {
    code: typeof error.code === 'number' ? String(error.code) : fallbackCode,
    title,
    message: error.error_data?.details ?? error.error_user_msg ?? error.message ?? title,
  };
}

export function classifyGraphFailure(failure: GraphFailure): FailureClass {
  if (failure.kind === 'timeout') {
    return {
      kind: 'transient',
      error: { code: 'provider_timeout', title: 'Provider timeout', message: 'The Graph API did not answer in time.' },
    };
  }
  if (failure.kind === 'network') {
    return {
      kind: 'transient',
      error: { code: 'provider_unreachable', title: 'Provider unreachable', message: failure.detail },
    };
  }
  const { status, retryAfterMs } = failure;
  const error: ProviderError = failure.error
    ? providerErrorOf(failure.error, `http_${status}`)
    : { code: `http_${status}`, title: `HTTP ${status}`, message: `The Graph API answered HTTP ${status}.` };
  const code = failure.error?.code;
  let transient: boolean;
  if (typeof code === 'number' && PERMANENT_CODES.has(code)) transient = false;
  else if (typeof code === 'number' && (TRANSIENT_CODES.has(code) || isPermissionCode(code))) transient = true;
  else transient = status >= 500 || status === 401 || status === 403 || status === 408 || status === 429;
  if (!transient) return { kind: 'permanent', error };
  return { kind: 'transient', error, ...(retryAfterMs !== undefined && { retryAfterMs }) };
}
