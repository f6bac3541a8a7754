import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { REPLY_EVENT } from '../../domain/webhookPayload.ts';
import { notFound } from '../../errors.ts';
import { findMessageForKey, listMessagesForKey, messageTimeline } from '../../messages/messageReads.ts';
import { parseIdempotencyKey } from '../../domain/messageRequest.ts';
import { cancelMessage } from '../../sending/cancelMessage.ts';
import type { SendResult } from '../../sending/sendMessages.ts';
import { WebhookDeliveryView, webhookDeliveryView } from '../../webhooks/deliveryView.ts';
import { authenticate, authorizedWrite, confirmKey, keyVerified, verifyingErrorHandler, verifyKey } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { validationError } from '../errors.ts';
import { acceptedMessageJson, messageJson, MessageStatusView, MessageView, ProviderErrorView } from '../messageView.ts';
import { decodeCursor, PageQuery, paginate } from '../pagination.ts';
import { ReplyView, replyView } from '../replyView.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';
import { RECIPIENT_MAX_LENGTH } from '../../domain/messageRequest.ts';

// The message view lives in messageView.ts; these names stay importable from here.
export { acceptedMessageJson, messageJson, MessageView, messageView } from '../messageView.ts';

function sendJson(reply: FastifyReply, body: string) {
  return reply.type('application/json; charset=utf-8').send(body);
}

// Keys "1", "2"… (POSITIONAL templates), or parameter names (NAMED templates: lowercase letters,
// digits and underscores). A POSITIONAL template refuses named keys as this schema refuses others.
export const Variables = (description: string) =>
  Type.Record(Type.String({ pattern: '^([1-9][0-9]{0,2}|(?![0-9]+$)[a-z0-9_]{1,100})$' }), Type.String({ minLength: 1, maxLength: 1024 }), {
    additionalProperties: false,
    maxProperties: 100,
    description,
  });

export const BodyVariables = () =>
  Variables('BODY placeholder values: "1" fills {{1}}, and so on; for a NAMED template, by name ("first_name" fills {{first_name}}).');
export const HeaderVariables = () => Variables('TEXT HEADER placeholder values, the same way.');

/** The fields a rich template's send takes (CONTRACT §9), beside the spec's. */
export const RichSendFields = {
  headerMedia: Type.Optional(
    Type.Object(
      {
        link: Type.String({ maxLength: 2048, pattern: '^https://[^\\s]+$', description: 'An https URL the provider fetches the media from.' }),
        filename: Type.Optional(Type.String({ minLength: 1, maxLength: 240, description: 'DOCUMENT: the file name the recipient sees.' })),
      },
      {
        additionalProperties: false,
        description: 'The media of an IMAGE, VIDEO or DOCUMENT header: required exactly when the template has one (422 template_variables_mismatch otherwise).',
      },
    ),
  ),
  headerLocation: Type.Optional(
    Type.Object(
      {
        latitude: Type.Number({ minimum: -90, maximum: 90 }),
        longitude: Type.Number({ minimum: -180, maximum: 180 }),
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
        address: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
      },
      { additionalProperties: false, description: 'The place of a LOCATION header: required exactly when the template has one.' },
    ),
  ),
  buttons: Type.Optional(
    Type.Record(
      Type.String({ pattern: '^(0|[1-9][0-9]?)$' }),
      Type.Object(
        {
          text: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'URL button: the value of its `{{1}}` (required when its url has one).' })),
          payload: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'QUICK_REPLY: the payload returned on a tap (default: the button’s text).' })),
          couponCode: Type.Optional(Type.String({ minLength: 1, maxLength: 15, description: 'COPY_CODE: the code copied (required).' })),
        },
        { additionalProperties: false },
      ),
      {
        additionalProperties: false,
        maxProperties: 10,
        description:
          'Button values by the button’s index in the template ("0", "1"…): `{ "text" }` for a URL button’s `{{1}}`, ' +
          '`{ "payload" }` for a QUICK_REPLY, `{ "couponCode" }` for COPY_CODE. A key naming no such button, or a missing ' +
          'required value, is 422 template_variables_mismatch.',
      },
    ),
  ),
};

export const SendAt = Type.String({
  format: 'date-time',
  description:
    'Schedule the message: it stays QUEUED (with `scheduledFor`) and is not submitted before this time. From now to 35 days ' +
    'ahead (422 send_at_out_of_range otherwise). Left out: at once.',
});

const SendBody = Type.Object(
  {
    to: Type.String({
      maxLength: RECIPIENT_MAX_LENGTH,
      description:
        'E.164 with the leading +, e.g. +5511987654321; or a WhatsApp business-scoped user id of a user who hides their ' +
        'number behind a username (US.13491208655302741918, or a parent id US.ENT.11815799212886844830).',
    }),
    template: Type.String({ minLength: 1, maxLength: 512, description: 'Name of an APPROVED template (case-sensitive).' }),
    language: Type.String({ minLength: 1, maxLength: 16, description: 'Must be the language the template was approved in.' }),
    variables: Type.Optional(BodyVariables()),
    headerVariables: Type.Optional(HeaderVariables()),
    ...RichSendFields,
    sendAt: Type.Optional(SendAt),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(MessageStatusView),
    to: Type.Optional(Type.String({ maxLength: RECIPIENT_MAX_LENGTH })),
    template: Type.Optional(Type.String({ maxLength: 512 })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Queued at or after this time.' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Queued before this time.' })),
    batchId: Type.Optional(Type.String({ maxLength: 100, description: 'Only the messages of this batch.' })),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

const EventView = Type.Object({
  id: Type.String(),
  status: MessageStatusView,
  event: Type.Union([Type.String(), Type.Null()], { description: 'The webhook event type; null for QUEUED.' }),
  occurredAt: Timestamp,
  error: Type.Optional(ProviderErrorView),
  // message.replied only: what the recipient answered (`status` is then the message's status, unchanged by it).
  reply: Type.Optional(ReplyView),
  deliveries: Type.Array(WebhookDeliveryView, { description: 'Webhook deliveries of this event, with their attempts.' }),
});

/** The Idempotency-Key header, or a 400 naming it. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  try {
    return parseIdempotencyKey(request.headers['idempotency-key']);
  } catch (error) {
    throw validationError([{ field: 'header:Idempotency-Key', code: 'invalid', message: (error as Error).message }]);
  }
}

/**
 * Answers a send: a commit checked the key, a replay (of this or another process's commit) did
 * not, so the key is verified first then (the route's authentication was deferred).
 */
export async function sendResult(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, result: SendResult) {
  if (result.kind === 'replayed') {
    await verifyKey(ctx, request);
    reply.header('idempotent-replayed', 'true');
  } else {
    keyVerified(ctx, request);
  }
  return reply.code(result.status).type('application/json; charset=utf-8').send(result.body);
}

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: '1–255 printable ASCII characters.' })),
});

export async function messageRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const sending = ctx.sending;
  const authenticated = authenticate(ctx);
  // The message reads check the key in their own statement (confirmKey): a key seen before costs no lookup of its own.
  const readAuthentication = { onRequest: authenticate(ctx, { deferVerification: true }), errorHandler: verifyingErrorHandler(ctx) };

  api.post(
    '/v1/messages',
    {
      onRequest: authenticate(ctx, { deferVerification: true }),
      errorHandler: verifyingErrorHandler(ctx),
      schema: {
        operationId: 'sendMessage',
        tags: ['Messages'],
        summary: 'Send a message',
        description:
          'Sends one templated message. Queues the message and answers 202 at once; delivery is asynchronous. With an Idempotency-Key, a repeat ' +
          'within 24 hours returns the original answer (with `Idempotent-Replayed: true`). With `sendAt`, the message ' +
          'waits QUEUED until then. A number on the project’s suppression list is 422 recipient_suppressed.',
        security: BEARER,
        headers: IdempotencyHeaders,
        body: SendBody,
        response: {
          202: MessageView,
          ...errorResponses(
            'validation_failed',
            'invalid_json',
            'template_not_found',
            'template_not_approved',
            'template_language_mismatch',
            'template_variables_mismatch',
            'provider_not_configured',
            'recipient_suppressed',
            'send_at_out_of_range',
            'idempotency_key_reused',
            'idempotency_request_in_progress',
            'unavailable',
          ),
        },
      },
    },
    async (request, reply) => {
      const result = await sending.send({
        ...request.body,
        projectId: request.auth.projectId,
        keyId: request.auth.keyId,
        idempotencyKey: idempotencyKeyOf(request),
        answer: acceptedMessageJson,
        beforeCommit: async () => ctx.testHooks.beforeAuthorizedWrite?.('/v1/messages'),
      });
      return sendResult(ctx, request, reply, result);
    },
  );

  api.post(
    '/v1/messages/:id/cancel',
    {
      onRequest: authenticated,
      schema: {
        operationId: 'cancelMessage',
        tags: ['Messages'],
        summary: 'Cancel a message',
        description:
          'Cancels a message not yet submitted to the provider. A QUEUED message (scheduled or waiting its turn) becomes CANCELED, with `canceledAt` and the event ' +
          '`message.canceled`, and is never submitted. A message already submitted, or being submitted right now, is 409 ' +
          'message_not_cancelable; canceling a CANCELED message answers it as it is. No body.',
        security: BEARER,
        params: IdParams,
        response: { 200: MessageView, ...errorResponses('not_found', 'message_not_cancelable') },
      },
    },
    async (request, reply) => {
      const outcome = await authorizedWrite(ctx, request, (trx) =>
        cancelMessage(trx, { notifier: ctx.notifier, counters: ctx.counters }, request.auth.projectId, request.params.id, Date.now()),
      );
      if (outcome.kind === 'canceled' && outcome.webhooks) ctx.notifier.wakeLocal('webhooks');
      return sendJson(reply, messageJson(outcome.message));
    },
  );

  api.get(
    '/v1/messages/:id',
    {
      ...readAuthentication,
      schema: {
        operationId: 'getMessage',
        tags: ['Messages'],
        summary: 'Get a message',
        description: 'A message with its current status.',
        security: BEARER,
        params: IdParams,
        response: { 200: MessageView, ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      const { auth } = request;
      const { key, found } = await findMessageForKey(ctx.database.reader, auth.keyHash, auth.projectId, request.params.id);
      confirmKey(ctx, request, key);
      if (!found) throw notFound('message');
      return sendJson(reply, messageJson(found));
    },
  );

  api.get(
    '/v1/messages',
    {
      ...readAuthentication,
      schema: {
        operationId: 'listMessages',
        tags: ['Messages'],
        summary: 'List messages',
        description:
          'The project’s messages, newest first. A bare array. Pages with `limit` and the opaque `cursor` of the `Link: <…>; rel="next"` header, which is absent on the last page. ' +
          '`batchId` lists one batch’s messages.',
        security: BEARER,
        querystring: ListQuery,
        response: { 200: Type.Array(MessageView), ...errorResponses('validation_failed') },
      },
    },
    async (request, reply) => {
      const { limit, cursor, status, to, template, since, until, batchId } = request.query;
      const { key, found: rows } = await listMessagesForKey(
        ctx.database.reader,
        request.auth.keyHash,
        request.auth.projectId,
        {
          ...(status && { status }),
          // An unencoded + in a query string arrives as a space: +5511… is what was meant.
          ...(to && { to: to.replace(/^ (?=\d)/, '+') }),
          ...(template && { template }),
          ...(since && { since: Date.parse(since) }),
          ...(until && { until: Date.parse(until) }),
          ...(batchId && { batchId }),
        },
        { limit, beforeId: decodeCursor(cursor) },
      );
      confirmKey(ctx, request, key);
      return sendJson(reply, `[${paginate(request, reply, rows, limit).map(messageJson).join(',')}]`);
    },
  );

  api.get(
    '/v1/messages/:id/events',
    {
      ...readAuthentication,
      schema: {
        operationId: 'listMessageEvents',
        tags: ['Messages'],
        summary: 'List a message’s events',
        description: 'A message’s status history, each change with its webhook deliveries.',
        security: BEARER,
        params: IdParams,
        response: { 200: Type.Array(EventView), ...errorResponses('not_found') },
      },
    },
    async (request) => {
      const { projectId, keyHash } = request.auth;
      const { key, found: message } = await findMessageForKey(ctx.database.reader, keyHash, projectId, request.params.id);
      confirmKey(ctx, request, key);
      if (!message) throw notFound('message');
      const { entries, deliveries } = await messageTimeline(ctx.database.reader, message);
      const deliveriesOf = (eventId: string) => deliveries.filter((delivery) => delivery.eventId === eventId).map(webhookDeliveryView);
      return entries.map((entry) =>
        entry.kind === 'status'
          ? {
              id: entry.event.id,
              status: entry.event.status,
              event: entry.event.status === 'QUEUED' ? null : `message.${entry.event.status.toLowerCase()}`,
              occurredAt: iso(entry.event.occurred_at),
              ...(entry.event.error !== null && { error: JSON.parse(entry.event.error) }),
              deliveries: deliveriesOf(entry.event.id),
            }
          : {
              id: entry.reply.id,
              status: entry.status,
              event: REPLY_EVENT,
              occurredAt: iso(entry.reply.occurred_at),
              reply: replyView(entry.reply),
              deliveries: deliveriesOf(entry.reply.id),
            },
      );
    },
  );
}
