import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { messageAnalytics } from '../../analytics/messageAnalytics.ts';
import { authenticate } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';

// Message figures over time: src/analytics/messageAnalytics.ts.

const Interval = Type.Union([Type.Literal('hour'), Type.Literal('day')]);
const GroupBy = Type.Union([Type.Literal('status'), Type.Literal('template'), Type.Literal('language')]);

const Query = Type.Object(
  {
    from: Type.String({ format: 'date-time', description: 'Start (inclusive), rounded down to the interval (UTC).' }),
    to: Type.String({ format: 'date-time', description: 'End (exclusive).' }),
    interval: Type.Optional(Interval),
    groupBy: Type.Optional(GroupBy),
  },
  { additionalProperties: false },
);

const Analytics = Type.Object({
  from: Timestamp,
  to: Timestamp,
  interval: Interval,
  groupBy: GroupBy,
  buckets: Type.Array(
    Type.Object({
      start: Timestamp,
      counts: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
        description:
          'By status: QUEUED (accepted), SENT, DELIVERED, READ, FAILED, CANCELED, each present. By template or ' +
          'language: accepted messages per template name or language code, every key seen in the range present.',
      }),
    }),
  ),
});

export async function analyticsRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.get(
    '/v1/analytics/messages',
    {
      schema: {
        operationId: 'getMessageAnalytics',
        tags: ['Analytics'],
        summary: 'Get message analytics',
        description:
          'Message counts over time. One bucket per hour or day (UTC) in [from, to), oldest first, zero-filled; `from` is rounded down and `to` ' +
          'up to the interval (counts are kept per hour, so a bucket is always whole), and the answer gives both as ' +
          'rounded. A count is the status changes that happened in the bucket: with groupBy=status the messages ' +
          'accepted (QUEUED), sent, delivered, read, failed and canceled then; with groupBy=template or language, ' +
          'the messages accepted then, per template name or language code. At most 31 days at interval=hour and ' +
          '366 at interval=day (422 invalid_time_range, as is `to` not after `from`). Defaults: interval=day, ' +
          'groupBy=status.',
        security: BEARER,
        querystring: Query,
        response: { 200: Analytics, ...errorResponses('validation_failed', 'invalid_time_range') },
      },
    },
    async (request) => {
      const { interval = 'day', groupBy = 'status' } = request.query;
      const query = { from: Date.parse(request.query.from), to: Date.parse(request.query.to), interval, groupBy };
      const { start, end, buckets } = await messageAnalytics(ctx.database.reader, request.auth.projectId, query);
      return {
        from: iso(start),
        to: iso(end),
        interval,
        groupBy,
        buckets: buckets.map((bucket) => ({ start: iso(bucket.start), counts: bucket.counts })),
      };
    },
  );
}
