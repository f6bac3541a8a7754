import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { changeProjectRetention, checkRetentionChange, readProjectRetention } from '../../retention/projectRetention.ts';
import { authenticate, authorizedWrite, unauthorized } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { validationError } from '../errors.ts';
import { BEARER, errorResponses } from '../schemas.ts';

const Duration = Type.String({ maxLength: 32, examples: ['90d'] });

const Setting = Type.Object({
  retention: Type.String({ description: 'How long this kind of data of the project is kept now.', examples: ['90d'] }),
  projectSetting: Type.Union([Type.String(), Type.Null()], {
    description: 'The project’s own setting; null: the operator’s retention applies.',
  }),
  maximum: Type.String({ description: 'The operator’s retention: the longest a project may set.', examples: ['400d'] }),
});

const RetentionView = Type.Object({
  messages: Setting,
  webhookDeliveries: Setting,
});

const RetentionBody = Type.Object(
  {
    messages: Type.Optional(
      Type.Union([Duration, Type.Null()], {
        description: 'How long messages, with their status events and deliveries, are kept (e.g. 90d); null: the operator’s.',
      }),
    ),
    webhookDeliveries: Type.Optional(
      Type.Union([Duration, Type.Null()], {
        description: 'How long webhook deliveries (payloads and attempts) are kept (e.g. 7d); null: the operator’s.',
      }),
    ),
  },
  { additionalProperties: false },
);

export async function projectRetentionRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.get(
    '/v1/projects/me/retention',
    {
      schema: {
        operationId: 'getProjectRetention',
        tags: ['Projects'],
        summary: 'Get data retention',
        description:
          'How long the project’s data is kept. Messages (with their status events and webhook deliveries) and webhook deliveries are removed once ' +
          'finished and older than their retention; a removed message answers 404 everywhere, and its counts stay ' +
          'in analytics.',
        security: BEARER,
        response: { 200: RetentionView, ...errorResponses() },
      },
    },
    async (request) => {
      const found = await readProjectRetention(ctx.database.reader, ctx.config.retention, request.auth.projectId);
      if (!found) throw unauthorized();
      return found;
    },
  );

  api.put(
    '/v1/projects/me/retention',
    {
      schema: {
        operationId: 'setProjectRetention',
        tags: ['Projects'],
        summary: 'Shorten data retention',
        description:
          'Keeps the project’s data for less time. Durations such as 30s, 15m, 12h or 90d, from 1s up to the operator’s retention (`maximum`): a project may ' +
          'shorten its retention, never extend it (400 validation_failed). A field left out is unchanged; null ' +
          'returns to the operator’s retention. Takes effect at the next purge run.',
        security: BEARER,
        body: RetentionBody,
        response: { 200: RetentionView, ...errorResponses('validation_failed', 'invalid_json') },
      },
    },
    async (request) => {
      const checked = checkRetentionChange(request.body, ctx.config.retention);
      if ('errors' in checked) throw validationError(checked.errors);
      const changed = await authorizedWrite(ctx, request, (trx) =>
        changeProjectRetention(trx, ctx.config.retention, request.auth.projectId, checked.ok, Date.now()),
      );
      if (!changed) throw unauthorized();
      return changed;
    },
  );
}
