import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DEFAULT_OPT_OUT_KEYWORDS, MAX_OPT_OUT_KEYWORD_LENGTH, MAX_OPT_OUT_KEYWORDS } from '../../domain/optOutKeywords.ts';
import { changeOptOutSettings, readOptOutSettings } from '../../suppressions/optOutSettings.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { BEARER, errorResponses } from '../schemas.ts';

// The project's opt-out keywords (CONTRACT §9): GET reads them, PUT replaces them.

const PATH = '/v1/projects/me/opt-out';
const DEFAULTS = DEFAULT_OPT_OUT_KEYWORDS.join(', ');

const OptOutView = Type.Object({
  keywords: Type.Array(Type.String(), { description: `The keywords (default ${DEFAULTS}).`, examples: [[...DEFAULT_OPT_OUT_KEYWORDS]] }),
  enabled: Type.Boolean({ description: 'Whether an inbound keyword suppresses its sender (default true).' }),
});

const OptOutChange = Type.Object(
  {
    keywords: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_OPT_OUT_KEYWORD_LENGTH + 32 }), {
        maxItems: MAX_OPT_OUT_KEYWORDS,
        description:
          `Replaces the whole list: at most ${MAX_OPT_OUT_KEYWORDS} keywords, each printable text of at most ` +
          `${MAX_OPT_OUT_KEYWORD_LENGTH} characters once trimmed, none repeated (case aside). Left out: unchanged.`,
      }),
    ),
    enabled: Type.Optional(Type.Boolean({ description: 'Left out: unchanged.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

const DESCRIPTION =
  'An inbound message to the project’s number (a reply or not) whose text or button payload is one of the keywords ' +
  '(trimmed, any case) puts its sender on the suppression list with `source: "opt_out_keyword"`, `scope: "all"`: ' +
  'sends to it are then 422 recipient_suppressed.';

export async function optOutRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const authenticated = authenticate(ctx);

  api.get(
    PATH,
    {
      onRequest: authenticated,
      schema: {
        operationId: 'getOptOutSettings',
        tags: ['Suppressions'],
        summary: 'Get opt-out keywords',
        description: DESCRIPTION,
        security: BEARER,
        response: { 200: OptOutView, ...errorResponses() },
      },
    },
    async (request) => readOptOutSettings(ctx.database.reader, request.auth.projectId),
  );

  api.put(
    PATH,
    {
      onRequest: authenticated,
      schema: {
        operationId: 'updateOptOutSettings',
        tags: ['Suppressions'],
        summary: 'Update opt-out keywords',
        description: `Replaces the project’s opt-out keywords, or turns them off. ${DESCRIPTION} Numbers already suppressed stay suppressed.`,
        security: BEARER,
        body: OptOutChange,
        response: { 200: OptOutView, ...errorResponses('validation_failed', 'invalid_json') },
      },
    },
    async (request) => {
      const { projectId } = request.auth;
      return authorizedWrite(ctx, request, (trx) => changeOptOutSettings(trx, projectId, request.body, Date.now()));
    },
  );
}
