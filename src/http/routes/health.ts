import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { isSchemaCurrent } from '../../db/migrate.ts';
import type { HttpContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { errorResponses } from '../schemas.ts';
import { dispatchStall } from '../../workers/messageQueueHealth.ts';

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
      try {
        await sql`select 1`.execute(ctx.database.db);
      } catch {
        throw new ApiError('unavailable', 'The database does not answer.', { headers: { 'retry-after': '1' } });
      }
      if (!(await isSchemaCurrent(ctx.database.db))) {
        throw new ApiError('unavailable', 'The database schema is not the one this code expects.');
      }
      const stall = await dispatchStall(ctx.database.db, Date.now(), ctx.config.workerStallMs);
      if (stall) throw new ApiError('unavailable', stall);
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
