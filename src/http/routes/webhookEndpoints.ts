import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CALLBACK_URL_MAX_LENGTH } from '../../domain/callbackUrl.ts';
import { SUBSCRIBABLE_EVENTS, TEST_EVENT } from '../../domain/webhookPayload.ts';
import type { WebhookEndpointRow } from '../../db/webhookEndpoints.ts';
import {
  changeWebhookEndpoint,
  checkEndpointId,
  createWebhookEndpoint,
  endpointChanges,
  endpointEvents,
  getWebhookEndpoint,
  listProjectWebhookEndpoints,
  MAX_ENDPOINTS_PER_PROJECT,
  newWebhookEndpoint,
  removeWebhookEndpoint,
  sendTestEvent,
} from '../../webhookEndpoints/webhookEndpoints.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { decodeCursor, PageQuery, paginate } from '../pagination.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';

// Webhook endpoints: receivers beside the project's callbackUrl, each with an event filter. Every
// event goes to the callbackUrl (if set) and to each enabled endpoint whose filter takes it.

const EVENT_LIST = SUBSCRIBABLE_EVENTS.join(', ');

const Url = Type.String({
  minLength: 1,
  maxLength: CALLBACK_URL_MAX_LENGTH,
  description:
    'An https URL (CONTRACT §6): no user-info, no fragment; its host must not be or resolve to a private, loopback, ' +
    'link-local, carrier-grade NAT, metadata or reserved address, checked here and again at every delivery.',
  examples: ['https://hooks.acme.example/svc'],
});
// Names are checked against the known events by the handler: an unknown one is 422, not 400.
const Events = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description: `The event types to receive, among: ${EVENT_LIST}. Omitted (or null on update): every event, including ones added later.`,
  examples: [['message.delivered', 'message.failed', 'template.rejected']],
});
const Description = Type.String({ maxLength: 500, description: 'A note of yours.' });

const WebhookEndpointView = Type.Object({
  id: Type.String({ examples: ['we_01jd2k3m4n5p6q7r8s9t0v1w2x'] }),
  url: Type.String(),
  events: Type.Array(Type.String(), { description: 'The event types it receives.' }),
  allEvents: Type.Boolean({ description: 'True when it receives every event, including ones added later.' }),
  enabled: Type.Boolean({ description: 'A disabled endpoint receives no new deliveries.' }),
  description: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const CreateBody = Type.Object(
  {
    url: Url,
    events: Type.Optional(Events),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
  },
  { additionalProperties: false },
);

const UpdateBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Type.Union([Events, Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);

const EndpointIdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

function endpointView(row: WebhookEndpointRow) {
  const events = endpointEvents(row);
  return {
    id: row.id,
    url: row.url,
    events: events ?? [...SUBSCRIBABLE_EVENTS],
    allEvents: events === null,
    enabled: row.enabled === 1,
    description: row.description,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export async function webhookEndpointRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.post(
    '/v1/webhook-endpoints',
    {
      schema: {
        operationId: 'createWebhookEndpoint',
        tags: ['Webhooks'],
        summary: 'Create a webhook endpoint',
        description:
          'Every event then goes to the project’s callbackUrl (if set) and to each enabled endpoint whose `events` ' +
          'take it: one delivery per destination, signed with the project’s webhook secret, with the same headers ' +
          `and retries. At most ${MAX_ENDPOINTS_PER_PROJECT} endpoints per project (409 webhook_endpoint_limit_reached). ` +
          'An unknown event type is 422 webhook_event_unknown; a URL against the rules is 400 validation_failed.',
        security: BEARER,
        body: CreateBody,
        response: {
          201: WebhookEndpointView,
          ...errorResponses('validation_failed', 'invalid_json', 'webhook_event_unknown', 'webhook_endpoint_limit_reached'),
        },
      },
    },
    async (request, reply) => {
      const row = await newWebhookEndpoint(request.auth.projectId, request.body, ctx.config.allowPrivateCallbacks, Date.now());
      await authorizedWrite(ctx, request, (trx) => createWebhookEndpoint(trx, row));
      reply.code(201);
      return endpointView(row);
    },
  );

  api.get(
    '/v1/webhook-endpoints',
    {
      schema: {
        operationId: 'listWebhookEndpoints',
        tags: ['Webhooks'],
        summary: 'List webhook endpoints',
        description: 'The project’s webhook endpoints, newest first. A bare array, paged with `limit` and `cursor` (the next page is in the `Link: <…>; rel="next"` header).',
        security: BEARER,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Type.Array(WebhookEndpointView), ...errorResponses('validation_failed') },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query;
      const before = decodeCursor(cursor);
      const rows = await listProjectWebhookEndpoints(ctx.database.reader, request.auth.projectId, {
        limit: limit + 1,
        ...(before !== undefined && { before }),
      });
      return paginate(request, reply, rows, limit).map(endpointView);
    },
  );

  api.get(
    '/v1/webhook-endpoints/:id',
    {
      schema: {
        operationId: 'getWebhookEndpoint',
        tags: ['Webhooks'],
        summary: 'Get a webhook endpoint',
        security: BEARER,
        params: EndpointIdParams,
        response: { 200: WebhookEndpointView, ...errorResponses('not_found') },
      },
    },
    async (request) => {
      return endpointView(await getWebhookEndpoint(ctx.database.reader, request.auth.projectId, request.params.id));
    },
  );

  api.patch(
    '/v1/webhook-endpoints/:id',
    {
      schema: {
        operationId: 'updateWebhookEndpoint',
        tags: ['Webhooks'],
        summary: 'Update a webhook endpoint',
        description:
          'Only the fields sent change; `events: null` subscribes it to every event. A new URL applies to every ' +
          'delivery of the endpoint not yet succeeded, retries included. Disabling it stops new deliveries at once; ' +
          'its pending ones are not sent: each fails at its next turn with the error "the webhook endpoint is ' +
          'disabled" (re-enable it, then recover them with POST /v1/webhook-deliveries/recover).',
        security: BEARER,
        params: EndpointIdParams,
        body: UpdateBody,
        response: {
          200: WebhookEndpointView,
          ...errorResponses('validation_failed', 'invalid_json', 'not_found', 'webhook_event_unknown'),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      const changes = await endpointChanges(id, request.body, ctx.config.allowPrivateCallbacks, Date.now());
      const row = await authorizedWrite(ctx, request, (trx) => changeWebhookEndpoint(trx, request.auth.projectId, id, changes));
      return endpointView(row);
    },
  );

  api.delete(
    '/v1/webhook-endpoints/:id',
    {
      schema: {
        operationId: 'deleteWebhookEndpoint',
        tags: ['Webhooks'],
        summary: 'Delete a webhook endpoint',
        description:
          'It gets no new deliveries. Its deliveries stay in the log; the pending ones are not sent: each fails at ' +
          'its next turn with the error "the webhook endpoint was deleted".',
        security: BEARER,
        params: EndpointIdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      checkEndpointId(id);
      await authorizedWrite(ctx, request, (trx) => removeWebhookEndpoint(trx, request.auth.projectId, id));
      reply.code(204);
      return null;
    },
  );

  api.post(
    '/v1/webhook-endpoints/:id/test',
    {
      schema: {
        operationId: 'testWebhookEndpoint',
        tags: ['Webhooks'],
        summary: 'Send a test event to a webhook endpoint',
        description:
          `Sends a signed \`${TEST_EVENT}\` event to this endpoint only, whatever its \`events\`, as a delivery like any ` +
          'other (headers, signature, retries, the delivery log): `{ "event": "webhook.test", "event_id", "occurred_at", ' +
          '"endpoint_id" }`. Answers 202 with the delivery’s id; read it back with GET /v1/webhook-deliveries/{id}. ' +
          'A disabled endpoint is 409 webhook_endpoint_disabled.',
        security: BEARER,
        params: EndpointIdParams,
        response: {
          202: Type.Object({ deliveryId: Type.String({ format: 'uuid' }) }),
          ...errorResponses('not_found', 'webhook_endpoint_disabled'),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      checkEndpointId(id);
      const deliveryId = await authorizedWrite(ctx, request, (trx) => sendTestEvent(trx, ctx.notifier, request.auth.projectId, id, Date.now()));
      ctx.notifier.wakeLocal('webhooks');
      reply.code(202);
      return { deliveryId };
    },
  );
}
