import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { MARKETING_MESSAGES_MODES } from '../../domain/marketingMessages.ts';
import { changeMarketingMessagesSetting, readMarketingMessagesSetting } from '../../sending/marketingMessagesSetting.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { BEARER, errorResponses } from '../schemas.ts';

// How the project sends MARKETING templates with WhatsApp: Cloud API, or the Marketing Messages API.

const PATH = '/v1/projects/me/marketing-messages';

const Mode = Type.Enum([...MARKETING_MESSAGES_MODES], {
    description:
      '`off`: every template through Cloud API (`POST /{phone-number-id}/messages`). `fallback`: MARKETING templates ' +
      'through the Marketing Messages API (`POST /{phone-number-id}/marketing_messages`) with `product_policy` ' +
      '`CLOUD_API_FALLBACK`: Meta sends through Cloud API when the business is not onboarded. `strict`: the same ' +
      'with `STRICT`: Meta refuses instead (the message FAILS, e.g. 134102).',
  examples: ['fallback'],
});

const SettingView = Type.Object({ mode: Mode });
const SettingBody = Type.Object({ mode: Mode }, { additionalProperties: false });

const DESCRIPTION =
  'A template counts as MARKETING by its latest category (Meta re-categorises templates; svc follows its ' +
  '`template_category_update`), read when the message is dispatched. The API that took each message is its `route`. ' +
  'Other categories always go through Cloud API. The sandbox follows the setting too (its prices say `marketing_lite`).';

export async function marketingMessagesRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const authenticated = authenticate(ctx);

  api.get(
    PATH,
    {
      onRequest: authenticated,
      schema: {
        operationId: 'getMarketingMessagesSetting',
        tags: ['Projects'],
        summary: 'Get the Marketing Messages setting',
        description: DESCRIPTION,
        security: BEARER,
        response: { 200: SettingView, ...errorResponses() },
      },
    },
    async (request) => readMarketingMessagesSetting(ctx.database.reader, request.auth.projectId),
  );

  api.put(
    PATH,
    {
      onRequest: authenticated,
      schema: {
        operationId: 'updateMarketingMessagesSetting',
        tags: ['Projects'],
        summary: 'Update the Marketing Messages setting',
        description: `${DESCRIPTION} Applies from the next dispatch; messages already taken by the provider stay as they were.`,
        security: BEARER,
        body: SettingBody,
        response: { 200: SettingView, ...errorResponses('validation_failed', 'invalid_json') },
      },
    },
    async (request) => {
      const { projectId } = request.auth;
      return authorizedWrite(ctx, request, (trx) => changeMarketingMessagesSetting(trx, projectId, request.body, Date.now()));
    },
  );
}
