import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { costAnalytics, type CostFigures, costReconciliations } from '../../analytics/costAnalytics.ts';
import type { CostDimension } from '../../db/messageCosts.ts';
import { fromMicros } from '../../domain/rateCard.ts';
import { authenticate } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';

// What the project's delivered messages cost, and how that compares with Meta's own totals:
// src/analytics/costAnalytics.ts.

const DIMENSIONS = ['day', 'template', 'category', 'market', 'country'] as const;
const GROUP_BY = `^(${DIMENSIONS.join('|')})(,(${DIMENSIONS.join('|')})){0,4}$`;

const Range = {
  from: Type.String({ format: 'date-time', description: 'Start (inclusive), rounded down to its UTC day.' }),
  to: Type.String({ format: 'date-time', description: 'End (exclusive), rounded up to a UTC day.' }),
};

const Figures = {
  currency: Type.String({ description: 'ISO 4217. Amounts in different currencies are never added together.', examples: ['USD'] }),
  amount: Type.Number({ description: 'What the charged messages cost, in the currency’s units (6 decimal places at most).' }),
  charged: Type.Integer({ minimum: 0, description: 'Delivered messages Meta charges for, priced by the rate card.' }),
  free: Type.Integer({ minimum: 0, description: 'Delivered messages Meta does not charge for (`pricing.billable` false).' }),
  unpriced: Type.Integer({ minimum: 0, description: 'Charged messages the rate card has no rate for (not in `amount`).' }),
};

const CostAnalytics = Type.Object({
  from: Timestamp,
  to: Timestamp,
  groupBy: Type.Array(Type.String()),
  totals: Type.Array(Type.Object(Figures), { description: 'The whole range, one entry per currency.' }),
  groups: Type.Array(
    Type.Object({
      day: Type.Optional(Timestamp),
      template: Type.Optional(Type.String()),
      category: Type.Optional(Type.String({ description: 'Meta’s pricing category: marketing, utility, authentication, …' })),
      market: Type.Optional(Type.String({ description: 'The rate card’s market of the recipient: a country or a region (“Rest of Africa”, “Other”).' })),
      country: Type.Optional(Type.String({ description: 'The recipient’s country (ISO 3166); empty when unknown (a business-scoped user id).' })),
      ...Figures,
    }),
    { description: 'One entry per combination of the groupBy keys seen in the range (and currency), in key order.' },
  ),
});

const Reconciliation = Type.Object({
  day: Timestamp,
  checkedAt: Timestamp,
  currency: Type.String(),
  meta: Type.Object({ messages: Type.Integer(), amount: Type.Number() }, { description: 'Meta’s pricing_analytics: charged (REGULAR) messages delivered that day and their cost.' }),
  svc: Type.Object({ messages: Type.Integer(), amount: Type.Number() }, { description: 'svc’s counters for the same day.' }),
  matches: Type.Boolean(),
  differences: Type.Array(
    Type.Object({
      category: Type.String(),
      country: Type.String(),
      metaMessages: Type.Integer(),
      svcMessages: Type.Integer(),
      metaAmount: Type.Number(),
      svcAmount: Type.Number(),
    }),
    { description: 'Each category and country where the two disagree (messages, or amount by more than 0.01).' },
  ),
});

function figures(row: CostFigures) {
  return { currency: row.currency, amount: fromMicros(row.amountMicros), charged: row.charged, free: row.free, unpriced: row.unpriced };
}

export async function analyticsCostRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.get(
    '/v1/analytics/cost',
    {
      schema: {
        operationId: 'getCostAnalytics',
        tags: ['Analytics'],
        summary: 'Get what delivered messages cost',
        description:
          'The cost of the messages delivered in [from, to) (whole UTC days), priced by the operator’s rate card from ' +
          'the `pricing` Meta reports for each message (README, "Cost"): totals per currency, and groups by `groupBy` — ' +
          'a comma-separated list of day, template, category, market and country (default: day). At most 366 days ' +
          '(422 invalid_time_range, as is `to` not after `from`). Meta’s invoice is the authority: compare with ' +
          'GET /v1/analytics/cost/reconciliation.',
        security: BEARER,
        querystring: Type.Object(
          { ...Range, groupBy: Type.Optional(Type.String({ pattern: GROUP_BY, examples: ['day', 'market,category'] })) },
          { additionalProperties: false },
        ),
        response: { 200: CostAnalytics, ...errorResponses('validation_failed', 'invalid_time_range') },
      },
    },
    async (request) => {
      const by = [...new Set((request.query.groupBy ?? 'day').split(','))] as CostDimension[];
      const range = { from: Date.parse(request.query.from), to: Date.parse(request.query.to) };
      const { start, end, totals, groups } = await costAnalytics(ctx.database.reader, request.auth.projectId, { ...range, by });
      return {
        from: iso(start),
        to: iso(end),
        groupBy: by,
        totals: totals.map(figures),
        groups: groups.map((row) => ({
          ...Object.fromEntries(by.map((d) => [d, d === 'day' ? iso(row.keys.day as number) : row.keys[d]])),
          ...figures(row),
        })),
      };
    },
  );

  api.get(
    '/v1/analytics/cost/reconciliation',
    {
      schema: {
        operationId: 'getCostReconciliation',
        tags: ['Analytics'],
        summary: 'Get the reconciliation of costs with Meta’s',
        description:
          'WhatsApp only. For each UTC day in [from, to) the reconciliation job has checked (every ' +
          'SVC_COST_RECONCILE_INTERVAL, the last 3 days): Meta’s pricing_analytics of the WABA (charged messages ' +
          'delivered, and their cost) beside svc’s counters, and where they differ. Oldest first. Meta’s figures are ' +
          'approximate and its day follows the WABA’s time zone; svc’s, UTC.',
        security: BEARER,
        querystring: Type.Object(Range, { additionalProperties: false }),
        response: { 200: Type.Array(Reconciliation), ...errorResponses('validation_failed', 'invalid_time_range') },
      },
    },
    async (request) => {
      const range = { from: Date.parse(request.query.from), to: Date.parse(request.query.to) };
      const rows = await costReconciliations(ctx.database.reader, request.auth.projectId, range);
      return rows.map((row) => {
        const differences = JSON.parse(row.differences) as Array<{
          category: string;
          country: string;
          metaMessages: number;
          svcMessages: number;
          metaAmountMicros: number;
          svcAmountMicros: number;
        }>;
        return {
          day: iso(Number(row.day)),
          checkedAt: iso(Number(row.checked_at)),
          currency: row.currency,
          meta: { messages: Number(row.meta_messages), amount: fromMicros(Number(row.meta_amount_micros)) },
          svc: { messages: Number(row.svc_messages), amount: fromMicros(Number(row.svc_amount_micros)) },
          matches: differences.length === 0,
          differences: differences.map((d) => ({
            category: d.category,
            country: d.country,
            metaMessages: d.metaMessages,
            svcMessages: d.svcMessages,
            metaAmount: fromMicros(d.metaAmountMicros),
            svcAmount: fromMicros(d.svcAmountMicros),
          })),
        };
      });
    },
  );
}
