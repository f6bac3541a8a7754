import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { HOUR_MS, readHourlyCounts } from '../../db/messageCounts.ts';
import { authenticate } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';

// Message figures over time, from the hourly counters (db/messageCounts.ts): a page of buckets
// reads at most one row per hour and key, whatever the project's size.

const DAY_MS = 24 * HOUR_MS;
const INTERVAL_MS = { hour: HOUR_MS, day: DAY_MS } as const;
/** The most buckets one answer holds: 31 days of hours, 366 days. */
const MAX_SPAN_MS = { hour: 31 * DAY_MS, day: 366 * DAY_MS } as const;
const STATUSES = ['QUEUED', 'SENT', 'DELIVERED', 'READ', 'FAILED', 'CANCELED'] as const;

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

function rangeError(message: string): ApiError {
  return new ApiError('invalid_time_range', message, { errors: [{ field: 'query:/to', code: 'invalid_range', message }] });
}

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
      const step = INTERVAL_MS[interval];
      const from = Date.parse(request.query.from);
      const to = Date.parse(request.query.to);
      const start = from - (from % step);
      if (to <= from) throw rangeError('to must be after from.');
      // Whole buckets only: the counters are hourly, so a bucket cut short would count past `to`.
      const end = to % step === 0 ? to : to - (to % step) + step;
      if (end - start > MAX_SPAN_MS[interval]) {
        throw rangeError(`At interval=${interval}, from and to may be at most ${interval === 'hour' ? 31 : 366} days apart.`);
      }
      const hours = await readHourlyCounts(ctx.database.reader, ctx.database.dialect, request.auth.projectId, {
        from: start,
        to: end,
        by: groupBy,
      });
      const keys = groupBy === 'status' ? [...STATUSES] : [...new Set(hours.map((row) => row.key))].sort();
      const buckets: { start: number; counts: Record<string, number> }[] = [];
      for (let at = start; at < end; at += step) {
        buckets.push({ start: at, counts: Object.fromEntries(keys.map((key) => [key, 0])) });
      }
      for (const row of hours) {
        // Day buckets sum their hours (UTC days: hours and days both start at multiples of the epoch).
        const bucket = buckets[Math.floor((row.hour - start) / step)];
        if (bucket) bucket.counts[row.key] = (bucket.counts[row.key] ?? 0) + row.count;
      }
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
