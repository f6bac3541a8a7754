import { BSUID_AUTHENTICATION_HINT } from '../../domain/messageRequest.ts';
import type { ProviderError } from '../provider.ts';
import type { GraphErrorBody, GraphFailure } from './client.ts';

// Graph API failures → outcomes. Meta says to decide on `code` and explain with
// `error_data.details`, never on the HTTP status or `error_subcode` (not returned since v16).
// Every code of Meta's error-code table (Cloud API reference, "Error codes") is classified here,
// by what waiting can fix: a retry helps only when the cause passes by itself (an outage,
// throttling) or can be fixed in time for the retry schedule without touching the message
// (CONTRACT §5: a token rotated or a permission granted in time rescues queued messages).

export type FailureClass =
  | { kind: 'transient'; error: ProviderError; retryAfterMs?: number }
  | { kind: 'permanent'; error: ProviderError };

/** Meta's codes by class: the key names the class, for the reader and the tests. */
export const GRAPH_ERROR_CLASSES = {
  transient: {
    /** The token expired or was invalidated (AuthException, 190): a rotated token rescues the message. */
    token: [0, 190],
    /** A permission not granted or removed (3, 10, 131005; 200–299 below): granting it in time rescues it. */
    permission: [3, 10, 131005],
    /** Throttling: app, WABA, throughput, spam, pair and registration rate limits; "wait and try again". */
    throttling: [4, 80007, 130429, 131048, 131056, 133016, 133008, 133009, 133015],
    /**
     * Meta-side trouble: unknown, service, something went wrong, unavailable, maintenance (131057: a
     * throughput upgrade takes the number away for up to a minute), a template still syncing.
     */
    outage: [1, 2, 131000, 131016, 131057, 133004, 2494100, 134101],
    /**
     * 131049: Meta held the message back for the recipient's per-user marketing limit; Meta says to
     * wait at least 24 hours before resending (RETRY_NOT_BEFORE_MS), as sooner fails the same way.
     */
    marketingLimit: [131049],
    /** 131059 (v24.0+): an expired pagination cursor; the call is made again from the first page. */
    cursor: [131059],
  },
  permanent: {
    /** The business account is restricted, blocked or locked by policy (HTTP 403, yet never passing by itself). */
    integrity: [368, 130497, 131031],
    /** The request itself is wrong. */
    request: [33, 100, 131008, 131009, 131051, 131052, 131053, 135000, 131055, 134100],
    /**
     * The recipient cannot get it: not on WhatsApp, the sender itself, outside the window, stopped
     * marketing messages (131050: "do not retry"), in Meta's marketing experiment (130472: never
     * sent, never billed), or a business-scoped user id given for an authentication template
     * (131062: those go to phone numbers only).
     */
    recipient: [131021, 131026, 131047, 131050, 130472, 131062, 470],
    /** The template: parameters, missing, too long, policy, paused, disabled, Flows. */
    template: [132000, 132001, 132005, 132007, 132012, 132015, 132016, 132068, 132069, 134102],
    /** The business account or number is not set up to send: display name, payment, registration, PIN. */
    account: [131037, 131042, 131045, 133000, 133005, 133006, 133010, 134011],
    /** Template management, migration, insights and onboarding errors (never passing by themselves). */
    management: [
      2388001, 2388012, 2388019, 2388040, 2388047, 2388072, 2388073, 2388091, 2388093, 2388103, 2388293, 2388299,
      200005, 200006, 200007, 2593079, 2593085, 2593107, 2593108, 1752041,
    ],
  },
} as const;

type Kind = keyof typeof GRAPH_ERROR_CLASSES;

/**
 * The least wait before a code's retry, as Meta documents it: a retry at the next backoff step
 * would fail the same way (and, for 131049, lower the number's delivery rate).
 */
export const RETRY_NOT_BEFORE_MS: Readonly<Record<number, number>> = {
  /** "Wait at least 24 hours before resending the template message." */
  131049: 24 * 3600_000,
  /** "The template syncing process can take up to 10 minutes to complete." */
  134101: 10 * 60_000,
};

const CLASS_OF = new Map<number, { kind: Kind; group: string }>();
for (const kind of Object.keys(GRAPH_ERROR_CLASSES) as Kind[]) {
  for (const [group, codes] of Object.entries(GRAPH_ERROR_CLASSES[kind])) {
    for (const code of codes as readonly number[]) CLASS_OF.set(code, { kind, group });
  }
}

/** The class Meta's table gives a code, or undefined for a code it does not list. */
export function graphErrorClass(code: number): { kind: Kind; group: string } | undefined {
  // 200–299: API permission (Meta lists the range as one row).
  if (code >= 200 && code <= 299) return { kind: 'transient', group: 'permission' };
  return CLASS_OF.get(code);
}

/** "(#131026) Message Undeliverable." → "Message Undeliverable." */
function titleOf(error: GraphErrorBody): string {
  const raw = error.error_user_title ?? error.message ?? 'Graph API error';
  return raw.replace(/^\(#\d+\)\s*/, '');
}

export function providerErrorOf(error: GraphErrorBody, fallbackCode: string): ProviderError {
  const title = titleOf(error);
  const message = error.error_data?.details ?? error.error_user_msg ?? error.message ?? title;
  return {
    code: typeof error.code === 'number' ? String(error.code) : fallbackCode,
    title,
    message: error.code === 131062 ? `${message} ${BSUID_AUTHENTICATION_HINT}` : message,
    ...(typeof error.fbtrace_id === 'string' && error.fbtrace_id !== '' && { fbtraceId: error.fbtrace_id }),
  };
}

/** The failure as svc reports it: Meta's code, title, details and trace id, or what went wrong on the way. */
export function graphFailureError(failure: GraphFailure): ProviderError {
  if (failure.kind === 'timeout') {
    return { code: 'provider_timeout', title: 'Provider timeout', message: 'The Graph API did not answer in time.' };
  }
  if (failure.kind === 'network') {
    return { code: 'provider_unreachable', title: 'Provider unreachable', message: failure.detail };
  }
  const { status } = failure;
  return failure.error
    ? providerErrorOf(failure.error, `http_${status}`)
    : { code: `http_${status}`, title: `HTTP ${status}`, message: `The Graph API answered HTTP ${status}.` };
}

/** Without a code Meta lists, the HTTP status decides: server trouble, throttling and a refused token pass. */
function transientStatus(status: number): boolean {
  return status >= 500 || status === 401 || status === 408 || status === 429;
}

export function classifyGraphFailure(failure: GraphFailure): FailureClass {
  const error = graphFailureError(failure);
  if (failure.kind !== 'http') return { kind: 'transient', error };
  const code = failure.error?.code;
  const listed = typeof code === 'number' ? graphErrorClass(code) : undefined;
  const transient = listed ? listed.kind === 'transient' : transientStatus(failure.status);
  if (!transient) return { kind: 'permanent', error };
  const notBefore = typeof code === 'number' ? RETRY_NOT_BEFORE_MS[code] : undefined;
  const retryAfterMs = notBefore === undefined ? failure.retryAfterMs : Math.max(notBefore, failure.retryAfterMs ?? 0);
  return { kind: 'transient', error, ...(retryAfterMs !== undefined && { retryAfterMs }) };
}

/**
 * Whether the Graph API could not be asked at all (network, timeout, server trouble, throttling),
 * as opposed to answering that the request is wrong: for calls where a refusal is the answer
 * (checking credentials), only these are worth a "try again later".
 */
export function isGraphOutage(failure: GraphFailure): boolean {
  if (failure.kind !== 'http') return true;
  const code = failure.error?.code;
  const listed = typeof code === 'number' ? graphErrorClass(code) : undefined;
  if (listed) return listed.group === 'outage' || listed.group === 'throttling' || listed.group === 'cursor';
  return failure.status >= 500 || failure.status === 408 || failure.status === 429;
}
