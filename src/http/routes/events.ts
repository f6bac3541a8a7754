import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FeedEventRow, FeedReplyRow } from '../../db/events.ts';
import { eventsAfter } from '../../messages/eventFeed.ts';
import { REPLY_EVENT, replyWebhookPayload, webhookEventOf, webhookPayload } from '../../domain/webhookPayload.ts';
import { authenticate } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';

// The project's message events as a feed, oldest first, for clients that pull instead of
// receiving webhooks (`svc webhooks listen`, `svc messages tail`). Each payload is the body a
// webhook of the event carries: status changes and replies (message.replied).

const EVENT_ID = '^[a-z]+_[0-9a-z]{26}$';

const StatusPayload = Type.Object(
  {
    event: Type.String(),
    message_id: Type.String(),
    to: Type.String(),
    template: Type.String(),
    status: Type.String(),
    provider_message_id: Type.String(),
    occurred_at: Timestamp,
    error: Type.Optional(Type.Object({ code: Type.String(), title: Type.String(), message: Type.String() })),
  },
  { description: 'A status change: the webhook body a callback receives for this event, field for field.' },
);

const ReplyPayload = Type.Object(
  {
    event: Type.Literal(REPLY_EVENT),
    event_id: Type.String(),
    message_id: Type.String(),
    to: Type.String(),
    template: Type.String(),
    reply: Type.Object({
      type: Type.Union([Type.Literal('button'), Type.Literal('text')]),
      text: Type.String(),
      payload: Type.Optional(Type.String()),
    }),
    occurred_at: Timestamp,
  },
  { description: 'A reply: the message.replied body a webhook endpoint receives, field for field.' },
);

const EventPayload = Type.Union([StatusPayload, ReplyPayload]);

const FeedEvent = Type.Object({
  id: Type.String({ examples: ['evt_01jd2k3m4n5p6q7r8s9t0v1w2x'], description: 'The event id (`eventId` of its deliveries).' }),
  type: Type.String({ examples: ['message.delivered'], description: 'The event name, as in the payload’s `event`.' }),
  occurredAt: Timestamp,
  payload: EventPayload,
});

const FeedQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({ pattern: EVENT_ID, description: 'Only events after this event id; the first events without it.' }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Page size.' }),
    ),
  },
  { additionalProperties: false },
);

/** One event as JSON, its payload the exact bytes a webhook of it carries. */
function feedEventJson(row: FeedEventRow | FeedReplyRow): string {
  if (row.kind === 'reply') {
    const payload = replyWebhookPayload({
      eventId: row.id,
      messageId: row.message_id,
      to: row.recipient,
      template: row.template_name,
      reply: { type: row.type as 'button' | 'text', text: row.text, payload: row.payload },
      occurredAt: row.occurred_at,
    });
    return `{"id":${JSON.stringify(row.id)},"type":"${REPLY_EVENT}","occurredAt":"${iso(row.occurred_at)}","payload":${payload}}`;
  }
  const payload = webhookPayload({
    status: row.status,
    messageId: row.message_id,
    to: row.recipient,
    template: row.template_name,
    providerMessageId: row.provider_message_id ?? '',
    occurredAt: row.occurred_at,
    error: row.error === null ? null : JSON.parse(row.error),
  });
  return (
    `{"id":${JSON.stringify(row.id)},"type":"${webhookEventOf(row.status)}",` +
    `"occurredAt":"${iso(row.occurred_at)}","payload":${payload}}`
  );
}

/** Sends JSON written here (the payloads as they were built) instead of the schema's serialiser. */
function sendJson(reply: FastifyReply, body: string) {
  return reply.type('application/json; charset=utf-8').send(body);
}

export async function eventRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get(
    '/v1/events',
    {
      onRequest: authenticate(ctx),
      schema: {
        operationId: 'listEvents',
        tags: ['Webhooks'],
        summary: 'List events',
        description:
          'The project’s events, oldest first. Every message event of the project (each status change after QUEUED: message.sent, .delivered, .read, .failed, ' +
          '.canceled; and each reply: message.replied), whether or not a callback URL or endpoint is set; template and ' +
          'test events are not in it. ' +
          'oldest first. Continue with `after` = the last id you got; when a page is full, the `Link: <…>; rel="next"` ' +
          'header names the next one. An event committed late may carry an id just before one already read: ' +
          'a poller that must see everything re-reads a few seconds back and skips the ids it has.',
        security: BEARER,
        querystring: FeedQuery,
        response: { 200: Type.Array(FeedEvent), ...errorResponses('validation_failed') },
      },
    },
    async (request, reply) => {
      const limit = request.query.limit ?? DEFAULT_PAGE_SIZE;
      const rows = await eventsAfter(ctx.database.reader, request.auth.projectId, request.query.after ?? '', limit);
      const page = rows.slice(0, limit);
      if (rows.length > limit) {
        const next = new URLSearchParams({ after: page.at(-1)!.id, limit: String(limit) });
        reply.header('link', `<${request.server.publicUrl()}/v1/events?${next}>; rel="next"`);
      }
      return sendJson(reply, `[${page.map(feedEventJson).join(',')}]`);
    },
  );
}
