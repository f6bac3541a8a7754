import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  checkDeliveryId,
  checkRecoverSince,
  getDelivery,
  listDeliveries,
  recoverFailedDeliveries,
  retryDelivery,
} from '../../webhookDeliveries/webhookDeliveries.ts';
import { WEBHOOK_EVENTS } from '../../domain/webhookPayload.ts';
import {
  webhookDeliveryListView,
  webhookDeliveryOf,
  WebhookDeliveryView,
  webhookDeliveryView,
} from '../../webhooks/deliveryView.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { decodeCursor, PageQuery, paginate } from '../pagination.ts';
import { BEARER, errorResponses } from '../schemas.ts';

const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(DeliveryStatus),
    event: Type.Optional(Type.Union(WEBHOOK_EVENTS.map((event) => Type.Literal(event)))),
    messageId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only this message’s deliveries.' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Created at or after this time.' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Created before this time.' })),
  },
  { additionalProperties: false },
);

const DeliveryIdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

export async function webhookDeliveryRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.get(
    '/v1/webhook-deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['Webhooks'],
        summary: 'List webhook deliveries',
        description:
          'The project’s webhook deliveries, newest first. A bare array, paged with `limit` and `cursor` (the next page is in the `Link: <…>; rel="next"` ' +
          'header). Attempts are listed without the receiver’s answers; read one delivery for those.',
        security: BEARER,
        querystring: ListQuery,
        response: { 200: Type.Array(WebhookDeliveryView), ...errorResponses('validation_failed') },
      },
    },
    async (request, reply) => {
      const { limit, cursor, status, event, messageId, since, until } = request.query;
      const before = decodeCursor(cursor);
      const rows = await listDeliveries(ctx.database.reader, request.auth.projectId, {
        limit: limit + 1,
        ...(before !== undefined && { before }),
        ...(status !== undefined && { status }),
        ...(event !== undefined && { event }),
        ...(messageId !== undefined && { messageId }),
        ...(since !== undefined && { since: Date.parse(since) }),
        ...(until !== undefined && { until: Date.parse(until) }),
      });
      const page = paginate(
        request,
        reply,
        rows.map((row) => ({ id: row.delivery.id, row })),
        limit,
      );
      return page.map(({ row }) => webhookDeliveryListView(webhookDeliveryOf(row)));
    },
  );

  api.get(
    '/v1/webhook-deliveries/:id',
    {
      schema: {
        operationId: 'getWebhookDelivery',
        tags: ['Webhooks'],
        summary: 'Get a webhook delivery',
        description:
          'A webhook delivery with the body sent (`payload`) and every attempt. Each attempt: when, where, the status code, how long, why it failed, and the first 1 KiB of the answer.',
        security: BEARER,
        params: DeliveryIdParams,
        response: { 200: WebhookDeliveryView, ...errorResponses('not_found') },
      },
    },
    async (request) => {
      const found = await getDelivery(ctx.database.reader, request.auth.projectId, request.params.id);
      // The body sent, so a reader can see what the receiver got beside what it answered.
      return { ...webhookDeliveryView(webhookDeliveryOf(found)), payload: found.delivery.payload };
    },
  );

  api.post(
    '/v1/webhook-deliveries/recover',
    {
      schema: {
        operationId: 'recoverWebhookDeliveries',
        tags: ['Webhooks'],
        summary: 'Recover failed webhook deliveries',
        description:
          'Re-queues every failed delivery of the project whose last attempt was at or after `since` (at most 7 days ' +
          'ago; 422 invalid_time_range otherwise): each is attempted again now, with the same delivery id and body, ' +
          'and follows the retry schedule if that attempt fails. For after a receiver’s outage. Answers 202 with ' +
          'how many were re-queued.',
        security: BEARER,
        body: Type.Object(
          { since: Type.String({ format: 'date-time', description: 'ISO 8601; at most 7 days ago.' }) },
          { additionalProperties: false },
        ),
        response: {
          202: Type.Object({ requeued: Type.Integer({ minimum: 0 }) }),
          ...errorResponses('validation_failed', 'invalid_json', 'invalid_time_range'),
        },
      },
    },
    async (request, reply) => {
      const now = Date.now();
      const since = Date.parse(request.body.since);
      checkRecoverSince(since, now);
      const { projectId } = request.auth;
      const requeued = await authorizedWrite(ctx, request, (trx) => recoverFailedDeliveries(trx, ctx.notifier, projectId, since, now));
      if (requeued > 0) ctx.notifier.wakeLocal('webhooks');
      reply.code(202);
      return { requeued };
    },
  );

  api.post(
    '/v1/webhook-deliveries/:id/retry',
    {
      schema: {
        operationId: 'retryWebhookDelivery',
        tags: ['Webhooks'],
        summary: 'Retry a webhook delivery',
        description:
          'Sends it again, now. Makes the delivery due at once, whatever its status: a new attempt with the same delivery id ' +
          '(X-Service-Delivery, webhook-id), the same body, a fresh timestamp and signature. Answers 202 with ' +
          'the delivery (`pending`); read it back for the attempt. If that attempt fails, the delivery follows ' +
          'the retry schedule when attempts remain in it, and is failed otherwise. When an attempt is in ' +
          'flight already, that attempt is the retry. A delivery to a webhook endpoint goes to the endpoint’s ' +
          'current URL (a disabled or deleted endpoint’s delivery fails without being sent).',
        security: BEARER,
        params: DeliveryIdParams,
        response: { 202: WebhookDeliveryView, ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      const { projectId } = request.auth;
      const { id } = request.params;
      checkDeliveryId(id);
      const found = await authorizedWrite(ctx, request, (trx) => retryDelivery(trx, ctx.notifier, projectId, id, Date.now()));
      ctx.notifier.wakeLocal('webhooks');
      reply.code(202);
      return webhookDeliveryView(webhookDeliveryOf(found));
    },
  );
}
