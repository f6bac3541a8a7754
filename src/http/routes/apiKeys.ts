import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createApiKey, listApiKeys, newApiKey, revokeProjectApiKey } from '../../apiKeys/apiKeys.ts';
import type { ApiKeyRow } from '../../db/apiKeys.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { decodeCursor, PageQuery, paginate } from '../pagination.ts';
import { BEARER, errorResponses, iso, isoOrNull, Timestamp } from '../schemas.ts';

const ApiKeyView = Type.Object({
  id: Type.String({ examples: ['key_01jd2k3m4n5p6q7r8s9t0v1w2x'] }),
  name: Type.String(),
  prefix: Type.String({ description: 'The first 12 characters of the key, to recognise it.' }),
  createdAt: Timestamp,
  lastUsedAt: Type.Union([Timestamp, Type.Null()], { description: 'May lag by up to a minute.' }),
});

const CreatedApiKey = Type.Object({
  ...ApiKeyView.properties,
  key: Type.String({ description: 'The key value. Shown once; it cannot be read back.' }),
  apiKey: Type.String({ description: 'The same value as key.' }),
});

const RevokedApiKey = Type.Object({ ...ApiKeyView.properties, revokedAt: Timestamp });

function apiKeyView(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdAt: iso(row.created_at),
    lastUsedAt: isoOrNull(row.last_used_at),
  };
}

const KeyIdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

export async function apiKeyRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.post(
    '/v1/api-keys',
    {
      schema: {
        tags: ['API keys'],
        summary: 'Create an API key',
        description: `Creates another API key for the project; its value is in the answer, shown once. A project holds at most ${ctx.config.maxApiKeysPerProject} active keys (409 api_key_limit_reached beyond).`,
        security: BEARER,
        body: Type.Object(
          {
            name: Type.String({
              minLength: 1,
              maxLength: 100,
              pattern: '\\S',
              description: 'A label, e.g. "production".',
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: CreatedApiKey,
          ...errorResponses('validation_failed', 'invalid_json', 'api_key_limit_reached'),
        },
      },
    },
    async (request) => {
      const { projectId, keyId } = request.auth;
      const { row, value } = newApiKey(projectId, request.body.name, Date.now());
      await authorizedWrite(ctx, request, (trx) => createApiKey(trx, row, keyId, ctx.config.maxApiKeysPerProject), { workChecksKey: true });
      return { ...apiKeyView(row), key: value, apiKey: value };
    },
  );

  api.get(
    '/v1/api-keys',
    {
      schema: {
        tags: ['API keys'],
        summary: 'List API keys',
        description:
          'The project’s active API keys, newest first. Key values are never shown again; `prefix` helps tell keys apart. A bare array, paged with `limit` and ' +
          'the opaque `cursor` of the `Link: <…>; rel="next"` header, which is absent on the last page.',
        security: BEARER,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Type.Array(ApiKeyView), ...errorResponses('validation_failed') },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query;
      const rows = await listApiKeys(ctx.database.reader, request.auth.projectId, {
        limit,
        beforeId: decodeCursor(cursor),
      });
      return paginate(request, reply, rows, limit).map(apiKeyView);
    },
  );

  api.delete(
    '/v1/api-keys/:id',
    {
      schema: {
        tags: ['API keys'],
        summary: 'Revoke an API key',
        description:
          'Takes effect at once, for requests in flight too. The last active key cannot be revoked (409).',
        security: BEARER,
        params: KeyIdParams,
        response: { 200: RevokedApiKey, ...errorResponses('not_found', 'last_active_key') },
      },
    },
    async (request) => {
      const { projectId, keyId } = request.auth;
      const row = await authorizedWrite(ctx, request, (trx) => revokeProjectApiKey(trx, projectId, request.params.id, keyId, Date.now()), {
        workChecksKey: true,
      });
      return { ...apiKeyView(row), revokedAt: iso(row.revoked_at!) };
    },
  );
}
