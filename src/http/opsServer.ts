import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { HttpContext } from './context.ts';
import { clientErrorHandler, newRequestId } from './edgeErrors.ts';
import { errorHandler, sendProblem } from './errorHandler.ts';
import { errorOf } from './errors.ts';
import { healthRoutes } from './routes/health.ts';

/**
 * The operator port: metrics and health for every role — the worker too, so a split deployment
 * is observable — on an address that need not be public.
 */
export async function buildOpsServer(ctx: HttpContext): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.logger.child({ port: 'ops' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => newRequestId(),
    requestTimeout: ctx.config.http.requestTimeoutMs,
    keepAliveTimeout: ctx.config.http.keepAliveTimeoutMs,
    clientErrorHandler,
    return503OnClosing: false,
    forceCloseConnections: true,
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, errorOf('operator_route_not_found', { method: request.method, path: request.url.split('?')[0]! })),
  );
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  await app.register(async (scope) => healthRoutes(scope, ctx));
  return app;
}
