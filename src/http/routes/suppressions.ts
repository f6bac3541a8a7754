import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { SuppressionRow, SuppressionScope, SuppressionSource } from '../../db/suppressions.ts';
import { getSuppression, listSuppressedNumbers, suppressNumber, unsuppressNumber } from '../../suppressions/suppressionList.ts';
import { RECIPIENT_MAX_LENGTH, recipientProblem } from '../../domain/messageRequest.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { validationError } from '../errors.ts';
import { decodeCursor, PageQuery, paginate } from '../pagination.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';

const SuppressionView = Type.Object({
  phoneNumber: Type.String({ examples: ['+5511987654321'] }),
  reason: Type.Union([Type.String(), Type.Null()]),
  source: Type.Union(
    [Type.Literal('api'), Type.Literal('provider'), Type.Literal('opt_out_keyword'), Type.Literal('marketing_opt_out')],
    {
      description:
        '`api`: added with POST /v1/suppressions; `provider`: added when the provider failed a message as opted out or not on ' +
        'WhatsApp; `opt_out_keyword`: the recipient sent one of the project’s opt-out keywords (GET /v1/projects/me/opt-out); ' +
        '`marketing_opt_out`: the recipient stopped marketing messages in WhatsApp (lifted when they resume them).',
    },
  ),
  scope: Type.Union([Type.Literal('all'), Type.Literal('marketing')], {
    description: '`all`: every send is refused; `marketing`: only sends of MARKETING templates are (UTILITY and AUTHENTICATION go).',
  }),
  createdAt: Timestamp,
});

function suppressionView(row: SuppressionRow) {
  return {
    phoneNumber: row.phone_number,
    reason: row.reason,
    source: row.source as SuppressionSource,
    scope: (row.scope ?? 'all') as SuppressionScope,
    createdAt: iso(row.created_at),
  };
}

const NumberParams = Type.Object({
  // As long as the longest recipient: a parent business-scoped user id (Meta: country, `ENT.`, up to 128 characters).
  phoneNumber: Type.String({
    maxLength: RECIPIENT_MAX_LENGTH,
    description: 'E.164, URL-encoded (`%2B5511987654321`), or a business-scoped user id (`US.13491208655302741918`).',
  }),
});

/** An E.164 number from a path or body, or a 400 naming the field. */
function phoneNumberOf(value: string, field: string): string {
  // An unencoded + in a path arrives as itself, but a client that form-encodes sends a space.
  const number = value.replace(/^ (?=\d)/, '+');
  const problem = recipientProblem(number);
  if (problem) throw validationError([{ field, code: 'invalid_phone', message: `${field} ${problem}.` }]);
  return number;
}

export async function suppressionRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const authenticated = authenticate(ctx);

  api.post(
    '/v1/suppressions',
    {
      onRequest: authenticated,
      schema: {
        operationId: 'createSuppression',
        tags: ['Suppressions'],
        summary: 'Suppress a phone number',
        description:
          'Stops sending to a number (an opt-out). Sends to the number are refused from now on with 422 recipient_suppressed (single sends, batch items, scheduled ' +
          'sends). Messages accepted before stay as they are: cancel them to stop them. 201 with the new record; a number ' +
          'already on the list answers 200 with its record, unchanged (a marketing-only one becomes `scope: "all"`).',
        security: BEARER,
        body: Type.Object(
          {
            phoneNumber: Type.String({ maxLength: RECIPIENT_MAX_LENGTH, description: 'E.164 with the leading +, or a business-scoped user id.' }),
            reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Why, for your records.' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: SuppressionView, 201: SuppressionView, ...errorResponses('validation_failed', 'invalid_json') },
      },
    },
    async (request, reply) => {
      const { projectId } = request.auth;
      const phoneNumber = phoneNumberOf(request.body.phoneNumber, '/phoneNumber');
      const reason = request.body.reason ?? null;
      const { added, row } = await authorizedWrite(ctx, request, (trx) => suppressNumber(trx, projectId, phoneNumber, reason, Date.now()));
      return reply.code(added ? 201 : 200).send(suppressionView(row));
    },
  );

  api.get(
    '/v1/suppressions',
    {
      onRequest: authenticated,
      schema: {
        operationId: 'listSuppressions',
        tags: ['Suppressions'],
        summary: 'List suppressions',
        description: 'The project’s suppressed numbers, newest first. A bare array, paged like every list (`limit`, `cursor`, `Link: <…>; rel="next"`).',
        security: BEARER,
        querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
        response: { 200: Type.Array(SuppressionView), ...errorResponses('validation_failed') },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query;
      const rows = await listSuppressedNumbers(ctx.database.reader, request.auth.projectId, { limit, beforeId: decodeCursor(cursor) });
      return paginate(request, reply, rows, limit).map(suppressionView);
    },
  );

  api.get(
    '/v1/suppressions/:phoneNumber',
    {
      onRequest: authenticated,
      schema: {
        operationId: 'getSuppression',
        tags: ['Suppressions'],
        summary: 'Get a suppression',
        description: 'Whether a number is suppressed, and why (404 when it is not).',
        security: BEARER,
        params: NumberParams,
        response: { 200: SuppressionView, ...errorResponses('validation_failed', 'not_found') },
      },
    },
    async (request) => {
      const phoneNumber = phoneNumberOf(request.params.phoneNumber, 'params:/phoneNumber');
      return suppressionView(await getSuppression(ctx.database.reader, request.auth.projectId, phoneNumber));
    },
  );

  api.delete(
    '/v1/suppressions/:phoneNumber',
    {
      onRequest: authenticated,
      schema: {
        operationId: 'deleteSuppression',
        tags: ['Suppressions'],
        summary: 'Remove a suppression',
        description: 'Sends to the number again. Removes the number from the suppression list: 204, or 404 when it is not on it.',
        security: BEARER,
        params: NumberParams,
        response: { 204: Type.Null({ description: 'Removed.' }), ...errorResponses('validation_failed', 'not_found') },
      },
    },
    async (request, reply) => {
      const { projectId } = request.auth;
      const phoneNumber = phoneNumberOf(request.params.phoneNumber, 'params:/phoneNumber');
      await authorizedWrite(ctx, request, (trx) => unsuppressNumber(trx, projectId, phoneNumber));
      return reply.code(204).send(null);
    },
  );
}
