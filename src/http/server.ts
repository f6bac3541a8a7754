import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import swagger from '@fastify/swagger';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import type { HttpContext } from './context.ts';
import { clientErrorHandler, connectHandler, expectationFailedHandler, frameworkErrorHandler } from './edgeErrors.ts';
import { errorHandler, sendProblem } from './errorHandler.ts';
import { ApiError, errorOf } from './errors.ts';
import { instrumentHttp } from './metrics.ts';
import { apiKeyRoutes } from './routes/apiKeys.ts';
import { messageRoutes } from './routes/messages.ts';
import { batchRoutes } from './routes/batches.ts';
import { optOutRoutes } from './routes/optOut.ts';
import { marketingMessagesRoutes } from './routes/marketingMessages.ts';
import { suppressionRoutes } from './routes/suppressions.ts';
import { templatePreviewRoutes } from './routes/templatePreview.ts';
import { healthRoutes } from './routes/health.ts';
import { projectRoutes } from './routes/projects.ts';
import { projectRetentionRoutes } from './routes/projectRetention.ts';
import { templateRoutes } from './routes/templates.ts';
import { testHelperRoutes } from './routes/testHelpers.ts';
import { providerCredentialRoutes } from './routes/providerCredentials.ts';
import { webhookSecretRoutes } from './routes/webhookSecret.ts';
import { webhookDeliveryRoutes } from './routes/webhookDeliveries.ts';
import { webhookEndpointRoutes } from './routes/webhookEndpoints.ts';
import { analyticsRoutes } from './routes/analytics.ts';
import { analyticsCostRoutes } from './routes/analyticsCost.ts';
import { createValidatorCompiler } from './validation.ts';
import { decoratePublicUrl } from './publicUrl.ts';
import { projectErasureRoutes } from './routes/projectErasure.ts';
import { consoleRoutes } from './routes/console.ts';
import { swaggerOptions } from './openapi/index.ts';
import { registerDocs } from './openapi/docs.ts';
import { eventRoutes } from './routes/events.ts';
import { serializersOnFirstUse } from './lazyCompilers.ts';
import { createProviderInbox } from '../messages/providerInbox.ts';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// Request ids as newRequestId makes them (req_ + 12 random bytes in base64url), cut from a pool
// of random bytes drawn 4 KiB at a time instead of one call for each request.
const ID_BYTES = 12;
let idPool = Buffer.alloc(0);
let idOffset = 0;

function pooledRequestId(): string {
  if (idOffset + ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_BYTES * 341);
    idOffset = 0;
  }
  const id = 'req_' + idPool.toString('base64url', idOffset, idOffset + ID_BYTES);
  idOffset += ID_BYTES;
  return id;
}

function requestIdOf(header: string | string[] | undefined): string {
  if (typeof header === 'string' && SANE_REQUEST_ID.test(header)) return header;
  return pooledRequestId();
}

/**
 * Answers 405 (with Allow) for a path that exists under other methods: Fastify alone says 404.
 * A second router holds every route's path so the not-found handler can ask.
 */
function trackRoutesForMethodNotAllowed(app: FastifyInstance) {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: false });
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      let known = methodsByPath.get(route.url);
      if (!known) {
        known = new Set();
        methodsByPath.set(route.url, known);
        router.on('GET', route.url, () => {}, { path: route.url });
      }
      known.add(method);
    }
  });
  return (method: string, url: string): string[] | undefined => {
    const path = url.split('?')[0]!;
    const found = router.find('GET', path);
    if (!found) return undefined;
    const allowed = methodsByPath.get((found.store as { path: string }).path);
    return allowed && !allowed.has(method) ? [...allowed] : undefined;
  };
}

export async function buildHttpServer(ctx: HttpContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    bodyLimit: ctx.config.bodyLimitBytes,
    trustProxy: ctx.config.trustProxy,
    requestIdHeader: false,
    genReqId: (request) => requestIdOf(request.headers['x-request-id']),
    // One line per request, written by our onResponse hook.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    // Slow or idle clients cannot hold connections: the whole request must arrive in time.
    requestTimeout: ctx.config.http.requestTimeoutMs,
    keepAliveTimeout: ctx.config.http.keepAliveTimeoutMs,
    http: {
      headersTimeout: ctx.config.http.headersTimeoutMs,
      // Node enforces those timeouts when it checks its connections: often enough to keep them.
      connectionsCheckingInterval: Math.min(1000, ctx.config.http.headersTimeoutMs),
      // Node would answer a missing Host with a bare 400; the onRequest hook below answers it.
      requireHostHeader: false,
    },
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    // Our own 503 during shutdown (below), in the API's problem+json.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 500 },
    schemaController: { compilersFactory: { buildSerializer: serializersOnFirstUse } },
  });
  app.server.maxConnections = ctx.config.http.maxConnections;
  // What Node alone would answer without problem+json: an unknown Expect, a CONNECT.
  app.server.on('checkExpectation', expectationFailedHandler);
  app.server.on('connect', connectHandler);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  // Only JSON bodies: drop Fastify's text/plain parser so anything else is 415.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(createValidatorCompiler());
  app.setErrorHandler(errorHandler);
  const allowedMethods = trackRoutesForMethodNotAllowed(app);
  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedMethods(request.method, request.url);
    if (allowed) {
      return sendProblem(
        reply,
        new ApiError(
          'method_not_allowed',
          `${request.method} is not allowed here; use ${allowed.join(', ')}.`,
          {
            headers: { allow: allowed.join(', ') },
          },
        ),
      );
    }
    return sendProblem(reply, errorOf('route_not_found', { method: request.method, path: request.url.split('?')[0]! }));
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // HTTP/1.1 requires a Host (RFC 9112 §3.2); without one some handlers cannot even build a URL.
    if (!request.headers.host && request.raw.httpVersion !== '1.0') {
      throw new ApiError('bad_request', 'The request has no Host header; HTTP/1.1 requires one.');
    }
    if (closing) {
      reply.header('connection', 'close');
      throw new ApiError('unavailable', 'This server is shutting down; retry the request.', {
        headers: { 'retry-after': '1' },
      });
    }
  });
  // The line of every request holds no value a caller chose beyond the method (the url is the
  // route's pattern), so it skips the redaction of secrets (most of a log call's cost). Its
  // fields are those of request.log: the request id first.
  const requestLines = ctx.logger.child({}, { redact: [] });
  app.addHook('onResponse', async (request, reply) => {
    requestLines.info(
      {
        requestId: request.id,
        method: request.method,
        url: request.routeOptions.url ?? 'unmatched',
        status: reply.statusCode,
        ms: reply.elapsedTime,
      },
      'request completed',
    );
  });
  instrumentHttp(app, ctx.metrics);

  await app.register(swagger, swaggerOptions(ctx.config));
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  registerDocs(app);

  decoratePublicUrl(app, ctx.config);
  await app.register(async (scope) => healthRoutes(scope, ctx));
  await app.register(async (scope) => projectRoutes(scope, ctx));
  await app.register(async (scope) => projectErasureRoutes(scope, ctx));
  await app.register(async (scope) => providerCredentialRoutes(scope, ctx));
  await app.register(async (scope) => webhookSecretRoutes(scope, ctx));
  await app.register(async (scope) => projectRetentionRoutes(scope, ctx));
  await app.register(async (scope) => apiKeyRoutes(scope, ctx));
  await app.register(async (scope) => templateRoutes(scope, ctx));
  await app.register(async (scope) => testHelperRoutes(scope, ctx));
  await app.register(async (scope) => messageRoutes(scope, ctx));
  await app.register(async (scope) => batchRoutes(scope, ctx));
  await app.register(async (scope) => suppressionRoutes(scope, ctx));
  await app.register(async (scope) => optOutRoutes(scope, ctx));
  await app.register(async (scope) => marketingMessagesRoutes(scope, ctx));
  await app.register(async (scope) => templatePreviewRoutes(scope, ctx));
  await app.register(async (scope) => webhookDeliveryRoutes(scope, ctx));
  await app.register(async (scope) => webhookEndpointRoutes(scope, ctx));
  await app.register(async (scope) => analyticsRoutes(scope, ctx));
  await app.register(async (scope) => analyticsCostRoutes(scope, ctx));
  await app.register(async (scope) => eventRoutes(scope, ctx));
  // The provider's own routes (WhatsApp: Meta's webhook), in a scope of their own.
  const { inboundRoutes } = ctx.provider;
  if (inboundRoutes) await app.register(async (scope) => inboundRoutes(scope, createProviderInbox(ctx)));
  await app.register(consoleRoutes);
  return app;
}
