import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { checkReadiness } from '../../operations/readiness.ts';
import type { HttpContext } from '../context.ts';
import { errorResponses } from '../schemas.ts';

const Status = Type.Object({ status: Type.String() });

// Public: no API key, so no 401.
const { 401: _unauthorized, ...notReady } = errorResponses('unavailable');

export async function healthRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  app.get(
    '/healthz',
    { schema: { tags: ['Operations'], summary: 'Check liveness', description: 'The process answers.', response: { 200: Status } } },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Check readiness',
        description: 'The database answers, its schema is current, and workers claim due messages.',
        response: { 200: Status, ...notReady },
      },
    },
    async () => {
      await checkReadiness(ctx.database.db, Date.now(), ctx.config.workerStallMs);
      return { status: 'ready' };
    },
  );

  app.get(
    '/metrics',
    { schema: { tags: ['Operations'], summary: 'Get Prometheus metrics', produces: ['text/plain'] } },
    async (_request, reply) => {
      reply.type(ctx.metrics.contentType);
      return ctx.metrics.metrics();
    },
  );
}
