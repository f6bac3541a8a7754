import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashApiKey, isWellFormedApiKey } from '../domain/apiKeys.ts';
import { findApiKeyByHash, isApiKeyActive } from '../db/apiKeys.ts';
import type { Db } from '../db/database.ts';
import type { HttpContext } from './context.ts';
import { ApiError } from './errors.ts';
import { RateLimiter, rateLimitHeaders } from './rateLimit.ts';

export interface Auth {
  readonly keyId: string;
  readonly projectId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every authenticated route. */
    auth: Auth;
  }
}

export function unauthorized(
  detail = 'Send a valid API key as "Authorization: Bearer svc_live_…".',
): ApiError {
  return new ApiError('unauthorized', detail);
}

/** How many Authorization fields the request carries: Node keeps only the first of several. */
function authorizationFieldCount(request: FastifyRequest): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'authorization') count++;
  return count;
}

/**
 * The bearer token of a request, or undefined when there is none in the expected form. Several
 * Authorization fields are refused (400) rather than one of them picked.
 */
export function bearerToken(request: FastifyRequest): string | undefined {
  if (authorizationFieldCount(request) > 1) {
    throw new ApiError('bad_request', 'Send one Authorization header, not several.');
  }
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}

// One token bucket per key and per running service (a test process runs several).
const keyLimiters = new WeakMap<HttpContext, RateLimiter>();

function keyLimiterOf(ctx: HttpContext): RateLimiter {
  let limiter = keyLimiters.get(ctx);
  if (limiter === undefined) {
    limiter = new RateLimiter(ctx.config.apiRateLimitPerMinute);
    keyLimiters.set(ctx, limiter);
  }
  return limiter;
}

/**
 * The onRequest hook of every authenticated route: one indexed lookup by the key's hash (which
 * reads whether the project is disabled too), then the key's rate limit, kept in memory.
 */
export function authenticate(ctx: HttpContext) {
  const limiter = keyLimiterOf(ctx);
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const token = bearerToken(request);
    if (token === undefined || !isWellFormedApiKey(token)) throw unauthorized();
    const key = await findApiKeyByHash(ctx.database.reader, hashApiKey(token));
    if (key === undefined || key.revoked_at !== null) throw unauthorized('The API key is unknown or revoked.');
    if (key.project_disabled_at !== null) throw unauthorized('This project is disabled; contact the operator.');
    const decision = limiter.take(key.id);
    const headers = rateLimitHeaders('api', decision);
    if (!decision.allowed) {
      throw new ApiError('rate_limited', `Too many requests with this API key; retry in ${decision.retryAfterSeconds} s.`, {
        headers,
      });
    }
    reply.headers(headers);
    request.auth = { keyId: key.id, projectId: key.project_id };
    ctx.keyUsage.note(key.id);
  };
}

/**
 * Runs an authenticated write in one transaction that first re-checks the request's key, so a
 * write racing its key's revocation either commits before the revocation or is refused with 401.
 */
export async function authorizedWrite<T>(
  ctx: HttpContext,
  request: FastifyRequest,
  work: (trx: Db) => Promise<T>,
  options: { workChecksKey?: boolean } = {},
): Promise<T> {
  await ctx.testHooks.beforeAuthorizedWrite?.(request.routeOptions.url ?? request.url);
  return ctx.database.db.transaction().execute(async (trx) => {
    // `workChecksKey`: the work locks the key row itself (revocation does, to keep lock order).
    if (!options.workChecksKey && !(await isApiKeyActive(trx, ctx.database.dialect, request.auth.keyId))) {
      throw unauthorized('The API key was revoked.');
    }
    return work(trx);
  });
}
