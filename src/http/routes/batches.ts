import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { countsOfBatches, getBatch, listProjectBatches } from '../../batches/batchReads.ts';
import type { BatchRow } from '../../db/batches.ts';
import type { MessageStatus } from '../../db/tables.ts';
import { MAX_BATCH_ITEMS } from '../../sending/sendMessages.ts';
import { authenticate, verifyingErrorHandler } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { MessageView } from '../messageView.ts';
import { decodeCursor, PageQuery, paginate } from '../pagination.ts';
import { BEARER, errorResponses, iso, Problem, Timestamp } from '../schemas.ts';
import { batchAnswerJson } from '../batchAnswer.ts';
import { BodyVariables, HeaderVariables, IdempotencyHeaders, idempotencyKeyOf, RichSendFields, SendAt, sendResult } from './messages.ts';
import { RECIPIENT_MAX_LENGTH } from '../../domain/messageRequest.ts';

const BatchItem = Type.Object(
  {
    to: Type.String({ maxLength: RECIPIENT_MAX_LENGTH, description: 'E.164 with the leading +, or a WhatsApp business-scoped user id.' }),
    variables: Type.Optional(BodyVariables()),
    headerVariables: Type.Optional(HeaderVariables()),
    ...RichSendFields,
    sendAt: Type.Optional(SendAt),
  },
  { additionalProperties: false },
);

const BatchBody = Type.Object(
  {
    template: Type.String({ minLength: 1, maxLength: 512, description: 'Name of an APPROVED template (case-sensitive).' }),
    language: Type.String({ minLength: 1, maxLength: 16, description: 'Must be the language the template was approved in.' }),
    items: Type.Array(BatchItem, { minItems: 1, maxItems: MAX_BATCH_ITEMS, description: 'One per recipient, 1–1,000.' }),
  },
  { additionalProperties: false },
);

const BatchAccepted = Type.Object({
  batchId: Type.String({ examples: ['bat_01jd2k3m4n5p6q7r8s9t0v1w2x'] }),
  acceptedCount: Type.Integer(),
  rejectedCount: Type.Integer(),
  items: Type.Array(
    Type.Union([
      Type.Object({ index: Type.Integer(), status: Type.Literal(202), message: MessageView }),
      Type.Object({
        index: Type.Integer(),
        status: Type.Integer({ minimum: 400, maximum: 499, description: 'The status a single send would have had.' }),
        error: Problem,
      }),
    ]),
    { description: 'One result per item, in request order.' },
  ),
});

const STATUSES: MessageStatus[] = ['QUEUED', 'SENT', 'DELIVERED', 'READ', 'FAILED', 'CANCELED'];

const BatchView = Type.Object({
  id: Type.String({ examples: ['bat_01jd2k3m4n5p6q7r8s9t0v1w2x'] }),
  template: Type.String(),
  language: Type.String(),
  createdAt: Timestamp,
  total: Type.Integer({ description: 'Messages accepted in the batch.' }),
  counts: Type.Object(
    Object.fromEntries(STATUSES.map((status) => [status, Type.Integer()])) as Record<MessageStatus, ReturnType<typeof Type.Integer>>,
    { description: 'How many of its messages are in each status now.' },
  ),
});

function batchView(row: BatchRow, counts: Partial<Record<MessageStatus, number>> = {}) {
  return {
    id: row.id,
    template: row.template_name,
    language: row.language,
    createdAt: iso(row.created_at),
    total: row.total,
    counts: Object.fromEntries(STATUSES.map((status) => [status, counts[status] ?? 0])) as Record<MessageStatus, number>,
  };
}

export async function batchRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const sending = ctx.sending;
  const authenticated = authenticate(ctx);

  api.post(
    '/v1/messages/batch',
    {
      onRequest: authenticate(ctx, { deferVerification: true }),
      errorHandler: verifyingErrorHandler(ctx),
      bodyLimit: ctx.config.batchBodyLimitBytes,
      schema: {
        operationId: 'sendMessageBatch',
        tags: ['Messages'],
        summary: 'Send a batch of messages',
        description:
          'Sends one template to up to 1,000 recipients. Each item is checked as a single send would be, and answered in `items` in request order: 202 with its message, ' +
          'or its own problem (400, 422). The accepted messages are committed together (all or none) with the batch, and ' +
          'paced per number like any send. A fault of the whole request (its shape, more than 1,000 items, the template, ' +
          'the project) is a plain problem and creates nothing. One Idempotency-Key covers the whole batch.',
        security: BEARER,
        headers: IdempotencyHeaders,
        body: BatchBody,
        response: {
          202: BatchAccepted,
          ...errorResponses(
            'validation_failed',
            'invalid_json',
            'payload_too_large',
            'template_not_found',
            'template_not_approved',
            'template_language_mismatch',
            'provider_not_configured',
            'idempotency_key_reused',
            'idempotency_request_in_progress',
            'unavailable',
          ),
        },
      },
    },
    async (request, reply) => {
      const result = await sending.sendBatch({
        ...request.body,
        projectId: request.auth.projectId,
        keyId: request.auth.keyId,
        idempotencyKey: idempotencyKeyOf(request),
        answer: (outcome) => batchAnswerJson(outcome, request.id),
        beforeCommit: async () => ctx.testHooks.beforeAuthorizedWrite?.('/v1/messages/batch'),
      });
      return sendResult(ctx, request, reply, result);
    },
  );

  api.get(
    '/v1/batches',
    {
      onRequest: authenticated,
      schema: {
        operationId: 'listBatches',
        tags: ['Messages'],
        summary: 'List batches',
        description: 'The project’s batches, newest first. A bare array, paged like every list (`limit`, `cursor`, `Link: <…>; rel="next"`).',
        security: BEARER,
        querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
        response: { 200: Type.Array(BatchView), ...errorResponses('validation_failed') },
      },
    },
    async (request, reply) => {
      const { projectId } = request.auth;
      const { limit, cursor } = request.query;
      const rows = paginate(request, reply, await listProjectBatches(ctx.database.reader, projectId, { limit, beforeId: decodeCursor(cursor) }), limit);
      const counts = await countsOfBatches(
        ctx.database.reader,
        projectId,
        rows.map((row) => row.id),
      );
      return rows.map((row) => batchView(row, counts.get(row.id)));
    },
  );

  api.get(
    '/v1/batches/:id',
    {
      onRequest: authenticated,
      schema: {
        operationId: 'getBatch',
        tags: ['Messages'],
        summary: 'Get a batch',
        description: 'A batch with how many of its messages are in each status.',
        security: BEARER,
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        response: { 200: BatchView, ...errorResponses('not_found') },
      },
    },
    async (request) => {
      const { batch, counts } = await getBatch(ctx.database.reader, request.auth.projectId, request.params.id);
      return batchView(batch, counts);
    },
  );
}
