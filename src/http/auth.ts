import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hashApiKey, isWellFormedApiKey } from '../domain/apiKeys.ts';
import { findApiKeyByHash, isApiKeyActive, type KeyForRequest } from '../db/apiKeys.ts';
import type { Db } from '../db/database.ts';
import type { HttpContext } from './context.ts';
import { errorHandler } from './errorHandler.ts';
import { ApiError } from './errors.ts';
import { type RateLimiter, rateLimitHeaders } from './rateLimit.ts';

export interface Auth {
  readonly keyId: string;
  readonly projectId: string;
  /**
   * False when the key was recognised from this process's cache of key hashes without asking the
   * database whether it is still active (routes that defer that check, see authenticate): an
   * answer may leave only once the database has confirmed it (verifyKey, or the write's commit).
   */
  verified: boolean;
  /** The key's hash, to verify it later. */
  readonly keyHash: string;
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

const REVOKED = 'The API key is unknown or revoked.';
const DISABLED = 'This project is disabled; contact the operator.';

/** Why the database refuses this key now (401), or undefined when it is active. */
function refusalOf(key: KeyForRequest | undefined): ApiError | undefined {
  if (key === undefined || key.revoked_at !== null) return unauthorized(REVOKED);
  if (key.project_disabled_at !== null) return unauthorized(DISABLED);
  return undefined;
}

function takeRateLimit(limiter: RateLimiter, keyId: string, reply: FastifyReply): void {
  const decision = limiter.take(keyId);
  const headers = rateLimitHeaders('api', decision);
  if (!decision.allowed) {
    throw new ApiError('rate_limited', { seconds: decision.retryAfterSeconds }, {
      headers,
    });
  }
  reply.headers(headers);
}

/**
 * The onRequest hook of every authenticated route: one indexed lookup by the key's hash (which
 * reads whether the project is disabled too), then the key's rate limit, kept in memory.
 *
 * `deferVerification` (POST /v1/messages, the message reads): a key this process has seen is
 * taken from its cache without the lookup, and the database decides later, before any answer
 * leaves: the write's commit re-checks the key (it always did, for revocations in flight), a
 * read reads the key in its own statement (confirmKey), and every other answer — an error, a
 * replay — first calls verifyKey. The route's error handler must be verifyingErrorHandler.
 */
export function authenticate(ctx: HttpContext, options: { deferVerification?: boolean } = {}) {
  const limiter = ctx.keyLimiter;
  const cache = ctx.keyProjects;
  const defer = options.deferVerification === true;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const token = bearerToken(request);
    if (token === undefined || !isWellFormedApiKey(token)) throw unauthorized();
    const keyHash = hashApiKey(token);
    const known = defer ? cache.get(keyHash) : undefined;
    if (known !== undefined) {
      request.auth = { keyId: known.keyId, projectId: known.projectId, verified: false, keyHash };
      takeRateLimit(limiter, known.keyId, reply);
      return;
    }
    const key = await findApiKeyByHash(ctx.database.reader, keyHash);
    const refusal = refusalOf(key);
    if (refusal) throw refusal;
    cache.remember(keyHash, key!.id, key!.project_id);
    takeRateLimit(limiter, key!.id, reply);
    request.auth = { keyId: key!.id, projectId: key!.project_id, verified: true, keyHash };
    ctx.keyUsage.note(key!.id);
  };
}

/** Asks the database whether a request's key is still active, unless it was asked already; 401 if not. */
export async function verifyKey(ctx: HttpContext, request: FastifyRequest): Promise<void> {
  if (request.auth.verified) return;
  confirmKey(ctx, request, await findApiKeyByHash(ctx.database.reader, request.auth.keyHash));
}

/**
 * The request's key as the database has it now (read by verifyKey, or beside a read of the
 * route's: see keyCheckedSql): 401 unless it is active, whether or not it was verified before.
 */
export function confirmKey(ctx: HttpContext, request: FastifyRequest, key: KeyForRequest | undefined): void {
  const { auth } = request;
  // A key's id and project never change; a row saying otherwise is refused, never served.
  const refusal = refusalOf(key) ?? (key!.id !== auth.keyId || key!.project_id !== auth.projectId ? unauthorized(REVOKED) : undefined);
  if (refusal) {
    ctx.keyProjects.forget(auth.keyHash);
    // The database has answered: the error handler must not ask it again (verifyingErrorHandler).
    auth.verified = true;
    throw refusal;
  }
  keyVerified(ctx, request);
}

/** The database confirmed the request's key (its write committed, or verifyKey asked). */
export function keyVerified(ctx: HttpContext, request: FastifyRequest): void {
  if (request.auth.verified) return;
  request.auth.verified = true;
  ctx.keyUsage.note(request.auth.keyId);
}

/**
 * The error handler of a route that defers verification: before an error leaves, a key taken
 * from the cache is verified, so a revoked key gets its 401 and never another answer — the
 * answer it would have had were it looked up first.
 */
export function verifyingErrorHandler(ctx: HttpContext) {
  return async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // request.auth is unset when the error came before authentication (a server shutting down).
    if (request.auth?.verified === false) {
      try {
        await verifyKey(ctx, request);
      } catch (refusal) {
        return errorHandler(refusal as FastifyError, request, reply);
      }
    }
    return errorHandler(error, request, reply);
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
    if (!options.workChecksKey && !(await isApiKeyActive(trx, request.auth.keyId))) {
      throw unauthorized('The API key was revoked.');
    }
    return work(trx);
  });
}
