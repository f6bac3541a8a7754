import { ERROR_CODES, type ErrorCode } from '../errors.ts';

// What every operation can answer beyond what its route declares, and the headers of each
// answer, as the HTTP layer really sends them (server.ts, auth.ts, errorHandler.ts,
// rateLimit.ts, pagination.ts). Shared definitions live in components.headers and
// components.responses; finishOperation() applies them to every operation.

type Json = Record<string, unknown>;

const ref = (kind: 'headers' | 'responses' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` });

export const sharedHeaders: Record<string, Json> = {
  XRequestId: {
    description: 'The id of this request (the caller’s `X-Request-Id` when it is sane, else a new `req_…`); quote it to support.',
    schema: { type: 'string', examples: ['req_Xq3v9Zt0bq2mWcRd'] },
  },
  RateLimit: {
    description:
      'The caller’s remaining quota (IETF draft-ietf-httpapi-ratelimit-headers): `"<policy>";r=<remaining>;t=<seconds until full>`. ' +
      'The policy is `api` (per API key) or `signup` (per client address).',
    schema: { type: 'string', examples: ['"api";r=5999;t=1'] },
  },
  RateLimitPolicy: {
    description: 'The quota: `"<policy>";q=<requests>;w=60` (per 60 seconds, refilled evenly).',
    schema: { type: 'string', examples: ['"api";q=6000;w=60'] },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$', examples: ['1'] },
  },
  WWWAuthenticate: {
    description: 'Always `Bearer`.',
    required: true,
    schema: { type: 'string', enum: ['Bearer'] },
  },
  Link: {
    description: 'RFC 8288: `<…>; rel="next"`, the absolute URL of the next page (same filters, its `cursor`); absent on the last page.',
    schema: { type: 'string', examples: ['<https://svc.example.com/v1/messages?limit=50&cursor=bXNnXzAx…>; rel="next"'] },
  },
  IdempotentReplayed: {
    description: '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`.',
    schema: { type: 'string', enum: ['true'] },
  },
};

function problemResponse(description: string, headers: Json = {}): Json {
  return {
    description,
    headers: { 'X-Request-Id': ref('headers', 'XRequestId'), ...headers },
    content: { 'application/problem+json': { schema: ref('schemas', 'Problem') } },
  };
}

const codes = (...list: ErrorCode[]) => list.map((code) => `\`${code}\``).join(', ');

export const sharedResponses: Record<string, Json> = {
  BadRequest: problemResponse(`${codes('bad_request')}: the request is not valid HTTP (no Host header, a URL that does not decode).`),
  Unauthorized: problemResponse(`${codes('unauthorized')}: no API key, or a malformed, unknown or revoked one.`, {
    'WWW-Authenticate': ref('headers', 'WWWAuthenticate'),
  }),
  PayloadTooLarge: problemResponse(`${codes('payload_too_large')}: the body is larger than the limit (default 64 KiB).`),
  UnsupportedMediaType: problemResponse(`${codes('unsupported_media_type')}: the body is not \`application/json\`.`),
  RateLimited: problemResponse(`${codes('rate_limited')}: too many requests; wait \`Retry-After\` seconds.`, {
    'Retry-After': ref('headers', 'RetryAfter'),
    RateLimit: ref('headers', 'RateLimit'),
    'RateLimit-Policy': ref('headers', 'RateLimitPolicy'),
  }),
  InternalError: problemResponse(`${codes('internal_error')}: a fault on our side, logged under the requestId.`),
  Unavailable: problemResponse(
    `${codes('unavailable')}: the server is shutting down or its database is unreachable; retry after \`Retry-After\` seconds.`,
    { 'Retry-After': ref('headers', 'RetryAfter') },
  ),
};

const SHARED_BY_STATUS: Record<string, string> = {
  '401': 'Unauthorized',
  '413': 'PayloadTooLarge',
  '415': 'UnsupportedMediaType',
  '429': 'RateLimited',
  '500': 'InternalError',
  '503': 'Unavailable',
};

export interface OperationFacts {
  /** Needs an API key (or an admin token). */
  authenticated: boolean;
  /** Is rate limited (every authenticated operation, and sign-up). */
  rateLimited: boolean;
  hasBody: boolean;
  paged: boolean;
  idempotent: boolean;
}

/** Adds the answers the HTTP layer can give to `responses`, and each answer's headers. */
export function finishResponses(responses: Json, facts: OperationFacts): void {
  if (!responses['400']) responses['400'] = ref('responses', 'BadRequest');
  if (facts.authenticated && !responses['401']) responses['401'] = ref('responses', 'Unauthorized');
  if (facts.hasBody) {
    responses['413'] ??= ref('responses', 'PayloadTooLarge');
    responses['415'] ??= ref('responses', 'UnsupportedMediaType');
  }
  if (facts.rateLimited && !responses['429']) responses['429'] = ref('responses', 'RateLimited');
  responses['500'] ??= ref('responses', 'InternalError');
  responses['503'] ??= ref('responses', 'Unavailable');

  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response) || '$ref' in response) continue;
    const shared = SHARED_BY_STATUS[status];
    // A route's own error answer keeps its description (the codes it lists) and takes the shared headers.
    const headers: Json = { 'X-Request-Id': ref('headers', 'XRequestId') };
    if (shared !== undefined) Object.assign(headers, (sharedResponses[shared]!.headers as Json) ?? {});
    if (facts.rateLimited && status !== '401') {
      headers.RateLimit = ref('headers', 'RateLimit');
      headers['RateLimit-Policy'] = ref('headers', 'RateLimitPolicy');
    }
    if (status.startsWith('2') && facts.paged) headers.Link = ref('headers', 'Link');
    if (status.startsWith('2') && facts.idempotent) headers['Idempotent-Replayed'] = ref('headers', 'IdempotentReplayed');
    response.headers = { ...headers, ...(isObject(response.headers) ? response.headers : {}) };
    if (response.description === 'Default Response') response.description = defaultDescription(status);
  }
}

function defaultDescription(status: string): string {
  if (status.startsWith('2')) return status === '202' ? 'Accepted.' : 'OK.';
  const titled = Object.values(ERROR_CODES).find((entry) => String(entry.status) === status);
  return titled?.title ?? 'Error.';
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
