import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  findMessage,
  listMessageEvents,
  listMessages,
  type MessageRow,
  type MessageViewRow,
  queuedMessageRow,
} from '../../db/messages.ts';
import type { TemplatesTable } from '../../db/tables.ts';
import {
  parameterProblems,
  parseIdempotencyKey,
  recipientProblem,
  requestFingerprint,
  variablesMatch,
} from '../../domain/messageRequest.ts';
import { renderText, sendProblem } from '../../domain/templates.ts';
import { listDeliveriesForMessage, WebhookDeliveryView, webhookDeliveryView } from '../../webhooks/deliveryView.ts';
import { authenticate, keyVerified, verifyingErrorHandler, verifyKey } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { ApiError, validationError } from '../errors.ts';
import { MessageAcceptor } from '../messageAcceptor.ts';
import { SendContexts, type TemplateParts, templateParts } from '../sendContexts.ts';
import { decodeCursor, PageQuery, paginate } from '../pagination.ts';
import { BEARER, errorResponses, iso, isoOrNull, Timestamp } from '../schemas.ts';

const Status = Type.Union([
  Type.Literal('QUEUED'),
  Type.Literal('SENT'),
  Type.Literal('DELIVERED'),
  Type.Literal('READ'),
  Type.Literal('FAILED'),
]);

const ProviderErrorView = Type.Object({
  code: Type.String(),
  title: Type.String(),
  message: Type.String(),
  fbtraceId: Type.Optional(Type.String({ description: 'Meta’s trace id of the failed call, for a support escalation.' })),
});

export const MessageView = Type.Object({
  id: Type.String({ examples: ['msg_01jd2k3m4n5p6q7r8s9t0v1w2x'] }),
  status: Status,
  to: Type.String(),
  template: Type.String(),
  language: Type.String(),
  queuedAt: Timestamp,
  updatedAt: Timestamp,
  sentAt: Type.Union([Timestamp, Type.Null()]),
  deliveredAt: Type.Union([Timestamp, Type.Null()]),
  readAt: Type.Union([Timestamp, Type.Null()]),
  failedAt: Type.Union([Timestamp, Type.Null()]),
  providerMessageId: Type.Union([Type.String(), Type.Null()]),
  error: Type.Optional(ProviderErrorView),
  variables: Type.Record(Type.String(), Type.String()),
  headerVariables: Type.Optional(Type.Record(Type.String(), Type.String())),
  content: Type.Object(
    { header: Type.Optional(Type.String()), body: Type.String(), footer: Type.Optional(Type.String()) },
    { description: 'What the recipient reads: the template rendered with the variables.' },
  ),
});

export function messageView(row: MessageViewRow) {
  return {
    id: row.id,
    status: row.status,
    to: row.recipient,
    template: row.template_name,
    language: row.language,
    queuedAt: iso(row.queued_at),
    updatedAt: iso(row.updated_at),
    sentAt: isoOrNull(row.sent_at),
    deliveredAt: isoOrNull(row.delivered_at),
    readAt: isoOrNull(row.read_at),
    failedAt: isoOrNull(row.failed_at),
    providerMessageId: row.provider_message_id,
    ...(row.status === 'FAILED' && row.error !== null && { error: JSON.parse(row.error) }),
    variables: JSON.parse(row.variables) as Record<string, string>,
    ...(row.header_variables !== null && { headerVariables: JSON.parse(row.header_variables) }),
    content: JSON.parse(row.rendered) as { header?: string; body: string; footer?: string },
  };
}

// Strings svc made or validated (ids, names, languages, E.164 numbers) need no escaping; anything
// else goes through JSON.stringify.
const PLAIN = /^[\w+.:-]*$/;
const json = (value: string) => (PLAIN.test(value) ? `"${value}"` : JSON.stringify(value));
const isoJson = (ms: number | null) => (ms === null ? 'null' : `"${iso(ms)}"`);

// The schema's serialiser (fast-json-stringify, as Fastify compiles it) writes an object's
// required properties first, then its optional ones, each group in the schema's order.
function serialisedOrder(schema: { properties: object; required?: string[] }): string[] {
  const required = schema.required ?? [];
  return [...required, ...Object.keys(schema.properties).filter((name) => !required.includes(name))];
}
const ERROR_FIELDS = serialisedOrder(ProviderErrorView);

/** A stored provider error as the schema serialises it. */
function providerErrorJson(stored: string): string {
  const error = JSON.parse(stored) as Record<string, unknown>;
  const fields = ERROR_FIELDS.filter((field) => error[field] !== undefined && error[field] !== null);
  return `{${fields.map((field) => `${json(field)}:${json(String(error[field]))}`).join(',')}}`;
}

/** The rendered content as the schema serialises it: body first; the stored JSON has the header first. */
function contentJson(rendered: string): string {
  if (!rendered.startsWith('{"header":')) return rendered;
  const { header, body, footer } = JSON.parse(rendered) as { header: string; body: string; footer?: string };
  return `{"body":${json(body)},"header":${json(header)}${footer === undefined ? '' : `,"footer":${json(footer)}`}}`;
}

/**
 * messageView(row) as the route's response schema serialises it, written straight from the row:
 * its JSON columns (written by svc from validated input) go in as they are instead of being
 * parsed back and serialised again. A test holds it byte-equal to the schema's serialiser.
 */
export function messageJson(row: MessageViewRow): string {
  return (
    `{"id":${json(row.id)},"status":"${row.status}","to":${json(row.recipient)},` +
    `"template":${json(row.template_name)},"language":${json(row.language)},` +
    `"queuedAt":${isoJson(row.queued_at)},"updatedAt":${isoJson(row.updated_at)},"sentAt":${isoJson(row.sent_at)},` +
    `"deliveredAt":${isoJson(row.delivered_at)},"readAt":${isoJson(row.read_at)},"failedAt":${isoJson(row.failed_at)},` +
    `"providerMessageId":${row.provider_message_id === null ? 'null' : json(row.provider_message_id)},` +
    `"variables":${row.variables},"content":${contentJson(row.rendered)}` +
    (row.status === 'FAILED' && row.error !== null ? `,"error":${providerErrorJson(row.error)}` : '') +
    (row.header_variables !== null ? `,"headerVariables":${row.header_variables}` : '') +
    '}'
  );
}

/**
 * The 202 body: JSON.stringify(messageView(row)) of a message just queued (the bytes the 202 has
 * always had, also stored for idempotent replays), written from the row's JSON columns.
 */
export function acceptedMessageJson(row: MessageRow): string {
  return (
    `{"id":${json(row.id)},"status":"QUEUED","to":${json(row.recipient)},` +
    `"template":${json(row.template_name)},"language":${json(row.language)},` +
    `"queuedAt":${isoJson(row.queued_at)},"updatedAt":${isoJson(row.updated_at)},"sentAt":null,"deliveredAt":null,` +
    `"readAt":null,"failedAt":null,"providerMessageId":null,"variables":${row.variables},` +
    (row.header_variables !== null ? `"headerVariables":${row.header_variables},` : '') +
    `"content":${row.rendered}}`
  );
}

function sendJson(reply: FastifyReply, body: string) {
  return reply.type('application/json; charset=utf-8').send(body);
}

/** Sends of one request check again with fresh reads at most this often when the template changes under them. */
const MAX_SEND_ATTEMPTS = 5;

const Variables = (description: string) =>
  Type.Record(Type.String({ pattern: '^[1-9][0-9]{0,2}$' }), Type.String({ minLength: 1, maxLength: 1024 }), {
    additionalProperties: false,
    maxProperties: 100,
    description,
  });

const SendBody = Type.Object(
  {
    to: Type.String({ maxLength: 32, description: 'E.164 with the leading +, e.g. +5511987654321.' }),
    template: Type.String({ minLength: 1, maxLength: 512, description: 'Name of an APPROVED template (case-sensitive).' }),
    language: Type.String({ minLength: 1, maxLength: 16, description: 'Must be the language the template was approved in.' }),
    variables: Type.Optional(Variables('BODY placeholder values: "1" fills {{1}}, and so on.')),
    headerVariables: Type.Optional(Variables('HEADER placeholder values, the same way.')),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Status),
    to: Type.Optional(Type.String({ maxLength: 32 })),
    template: Type.Optional(Type.String({ maxLength: 512 })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Queued at or after this time.' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Queued before this time.' })),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

const EventView = Type.Object({
  id: Type.String(),
  status: Status,
  event: Type.Union([Type.String(), Type.Null()], { description: 'The webhook event type; null for QUEUED.' }),
  occurredAt: Timestamp,
  error: Type.Optional(ProviderErrorView),
  deliveries: Type.Array(WebhookDeliveryView, { description: 'Webhook deliveries of this event, with their attempts.' }),
});

/** Picks the template a send names, or explains with the error the contract gives. */
function chooseTemplate(candidates: TemplatesTable[], name: string, language: string): TemplatesTable {
  if (candidates.length === 0) {
    throw new ApiError('template_not_found', `No template named '${name}' exists in this project.`);
  }
  const template = candidates.find((candidate) => candidate.language === language);
  if (!template) {
    const languages = candidates.map((candidate) => candidate.language).sort();
    throw new ApiError(
      'template_language_mismatch',
      `Template '${name}' exists in ${languages.join(', ')}, not in '${language}'; send with one of those languages.`,
    );
  }
  const problem = sendProblem({
    name,
    language,
    status: template.status,
    providerStatus: template.provider_status,
    providerStatusReason: template.provider_status_reason,
  });
  if (problem !== undefined) throw new ApiError('template_not_approved', problem);
  return template;
}

function describeKeys(values: Record<string, string> | undefined): string {
  const keys = Object.keys(values ?? {}).sort((a, b) => Number(a) - Number(b));
  return keys.length === 0 ? 'none' : keys.map((key) => `"${key}"`).join(', ');
}

function expectedKeys(count: number): string {
  return count === 0 ? 'none' : Array.from({ length: count }, (_, i) => `"${i + 1}"`).join(', ');
}

function sendReplay(reply: FastifyReply, status: number, body: string, replayed: boolean) {
  if (replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

export async function messageRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const acceptor = new MessageAcceptor(ctx.database, ctx.notifier);
  const sendContexts = new SendContexts(ctx.database.reader);
  const authenticated = authenticate(ctx);

  api.post(
    '/v1/messages',
    {
      onRequest: authenticate(ctx, { deferVerification: true }),
      errorHandler: verifyingErrorHandler(ctx),
      schema: {
        tags: ['Messages'],
        summary: 'Send one templated message',
        description:
          'Queues the message and answers 202 at once; delivery is asynchronous. With an Idempotency-Key, a repeat ' +
          'within 24 hours returns the original answer (with `Idempotent-Replayed: true`).',
        security: BEARER,
        headers: Type.Object({
          'idempotency-key': Type.Optional(Type.String({ description: '1–255 printable ASCII characters.' })),
        }),
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
            'idempotency_key_reused',
            'idempotency_request_in_progress',
          ),
        },
      },
    },
    async (request, reply) => {
      const { projectId, keyId } = request.auth;
      const body = request.body;
      let idempotencyKey: string | undefined;
      try {
        idempotencyKey = parseIdempotencyKey(request.headers['idempotency-key']);
      } catch (error) {
        throw validationError([
          { field: 'header:Idempotency-Key', code: 'invalid', message: (error as Error).message },
        ]);
      }
      const recipient = recipientProblem(body.to);
      const problems = [
        ...(recipient ? [{ field: '/to', code: 'invalid_phone', message: `/to ${recipient}.` }] : []),
        ...parameterProblems('/variables', body.variables),
        ...parameterProblems('/headerVariables', body.headerVariables),
      ];
      if (problems.length > 0) throw validationError(problems);

      const fingerprint = idempotencyKey === undefined ? '' : requestFingerprint(body);
      if (idempotencyKey !== undefined) {
        const replay = await acceptor.replayFor(projectId, idempotencyKey, fingerprint);
        if (replay?.kind === 'replayed') {
          await verifyKey(ctx, request);
          return sendReplay(reply, replay.status, replay.body, true);
        }
      }

      // The project and template as last read; any doubt (a refusal, a change found at commit) is
      // settled with a fresh read, so a remembered context never decides an answer on its own.
      for (let attempt = 0; ; attempt++) {
        const fresh = attempt > 0;
        const context = await sendContexts.get(projectId, body.template, fresh);
        let template: TemplatesTable;
        let parts: TemplateParts;
        try {
          if (!context) throw new ApiError('unauthorized', 'The API key is unknown or revoked.');
          // The template's own faults first (the spec's 422), then whether the project can send at all.
          template = chooseTemplate(context.templates, body.template, body.language);
          if (!context.providerConfigured) {
            throw new ApiError(
              'provider_not_configured',
              'Save the provider credentials first: PUT /v1/projects/me/provider-credentials.',
            );
          }
          parts = templateParts(template);
          if (!variablesMatch(parts.bodyCount, body.variables) || !variablesMatch(parts.headerCount, body.headerVariables)) {
            throw new ApiError(
              'template_variables_mismatch',
              `Template '${template.name}' (${template.language}) needs variables ${expectedKeys(parts.bodyCount)} and ` +
                `headerVariables ${expectedKeys(parts.headerCount)}; got variables ${describeKeys(body.variables)} and ` +
                `headerVariables ${describeKeys(body.headerVariables)}.`,
            );
          }
        } catch (error) {
          if (fresh) throw error;
          continue;
        }

        const now = Date.now();
        const content = {
          ...(parts.header && { header: renderText(parts.header.text, body.headerVariables ?? {}) }),
          body: renderText(parts.body.text, body.variables ?? {}),
          ...(parts.footer && { footer: parts.footer.text }),
        };
        const message = queuedMessageRow(
          {
            projectId,
            to: body.to,
            template,
            variables: body.variables ?? {},
            ...(body.headerVariables && { headerVariables: body.headerVariables }),
            content,
          },
          now,
        );
        await ctx.testHooks.beforeAuthorizedWrite?.('/v1/messages');
        const result = await acceptor.accept({
          keyId,
          projectId,
          message,
          template,
          responseBody: acceptedMessageJson(message),
          ...(idempotencyKey !== undefined && { idempotency: { key: idempotencyKey, fingerprint } }),
        });
        if (result.kind === 'stale') {
          if (attempt < MAX_SEND_ATTEMPTS) continue;
          throw new ApiError('unavailable', 'The template changed while the message was being sent; retry.', {
            headers: { 'retry-after': '1' },
          });
        }
        // A commit checked the key; a replay of another process's commit did not.
        if (result.kind === 'replayed') await verifyKey(ctx, request);
        else keyVerified(ctx, request);
        return sendReplay(reply, result.status, result.body, result.replayed);
      }
    },
  );

  api.get(
    '/v1/messages/:id',
    {
      onRequest: authenticated,
      schema: {
        tags: ['Messages'],
        summary: 'A message with its current status',
        security: BEARER,
        params: IdParams,
        response: { 200: MessageView, ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      const message = await findMessage(ctx.database.reader, request.auth.projectId, request.params.id);
      if (!message) throw new ApiError('not_found', 'No message of this project has that id.');
      return sendJson(reply, messageJson(message));
    },
  );

  api.get(
    '/v1/messages',
    {
      onRequest: authenticated,
      schema: {
        tags: ['Messages'],
        summary: 'The project’s messages, newest first',
        description:
          'A bare array. Pages with `limit` and the opaque `cursor` of the `Link: <…>; rel="next"` header, which is absent on the last page.',
        security: BEARER,
        querystring: ListQuery,
        response: { 200: Type.Array(MessageView), ...errorResponses('validation_failed') },
      },
    },
    async (request, reply) => {
      const { limit, cursor, status, to, template, since, until } = request.query;
      const rows = await listMessages(
        ctx.database.reader,
        request.auth.projectId,
        {
          ...(status && { status }),
          // An unencoded + in a query string arrives as a space: +5511… is what was meant.
          ...(to && { to: to.replace(/^ (?=\d)/, '+') }),
          ...(template && { template }),
          ...(since && { since: Date.parse(since) }),
          ...(until && { until: Date.parse(until) }),
        },
        { limit, beforeId: decodeCursor(cursor) },
      );
      return sendJson(reply, `[${paginate(request, reply, rows, limit).map(messageJson).join(',')}]`);
    },
  );

  api.get(
    '/v1/messages/:id/events',
    {
      onRequest: authenticated,
      schema: {
        tags: ['Messages'],
        summary: 'A message’s status history, each change with its webhook deliveries',
        security: BEARER,
        params: IdParams,
        response: { 200: Type.Array(EventView), ...errorResponses('not_found') },
      },
    },
    async (request) => {
      const { projectId } = request.auth;
      const message = await findMessage(ctx.database.reader, projectId, request.params.id);
      if (!message) throw new ApiError('not_found', 'No message of this project has that id.');
      const [events, deliveries] = await Promise.all([
        listMessageEvents(ctx.database.reader, message),
        listDeliveriesForMessage(ctx.database.reader, projectId, message.id),
      ]);
      return events.map((event) => ({
        id: event.id,
        status: event.status,
        event: event.status === 'QUEUED' ? null : `message.${event.status.toLowerCase()}`,
        occurredAt: iso(event.occurred_at),
        ...(event.error !== null && { error: JSON.parse(event.error) }),
        deliveries: deliveries.filter((delivery) => delivery.eventId === event.id).map(webhookDeliveryView),
      }));
    },
  );
}
