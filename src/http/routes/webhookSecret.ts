import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ProjectRow } from '../../db/projects.ts';
import { projectWithSecrets, rotateProjectWebhookSecret } from '../../projects/webhookSecret.ts';
import { liveWebhookSecrets } from '../../projectSecrets.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { type FieldError, validationError } from '../errors.ts';
import { BEARER, errorResponses, iso } from '../schemas.ts';

const WebhookSecretView = Type.Object({
  secret: Type.String({
    description: 'The current signing secret (Standard Webhooks form, `whsec_` + base64).',
    examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
  }),
  secrets: Type.Array(Type.String(), {
    description:
      'Every secret that signs now, current first. For 24 h after a rotation the previous one signs too, ' +
      'so `webhook-signature` carries one signature per secret.',
  }),
  previousSecretExpiresAt: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'When the previous secret stops signing; absent when none is live.',
    }),
  ),
});

function webhookSecretView(row: ProjectRow, key: Buffer, now: number) {
  const secrets = liveWebhookSecrets(row, key, now);
  return {
    secret: secrets[0]!,
    secrets,
    ...(secrets.length > 1 && { previousSecretExpiresAt: iso(row.previous_webhook_secret_expires_at!) }),
  };
}

// A JSON Pointer token (RFC 6901) for a body key named in an error.
function pointer(key: string): string {
  return '/' + key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The rotation takes no body: none at all, or an empty JSON object. */
function checkEmptyBody(body: unknown): void {
  if (body === undefined) return;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw validationError([{ field: '/', code: 'type', message: 'Send no body, or an empty JSON object.' }]);
  }
  const errors: FieldError[] = Object.keys(body).map((key) => ({
    field: pointer(key),
    code: 'unknown_field',
    message: `${pointer(key)} is not a known field: this request takes no body.`,
  }));
  if (errors.length > 0) throw validationError(errors);
}

function noStore(reply: FastifyReply): void {
  // The answer carries a secret: no cache on the way may keep it.
  reply.header('cache-control', 'no-store');
}

export async function webhookSecretRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  // `curl -X POST -H 'content-type: application/json'` sends an empty body: for this bodiless
  // route that means "no body", not malformed JSON. Scoped to this plugin only.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') {
      done(null, undefined);
      return;
    }
    jsonParser(request, body as string, done);
  });

  api.get(
    '/v1/projects/me/webhook-secret',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'Get the webhook signing secret',
        description:
          'The secrets that sign the project’s webhooks. Verify `webhook-signature` (Standard Webhooks) with any of `secrets`. Answered with `Cache-Control: no-store`.',
        security: BEARER,
        response: { 200: WebhookSecretView, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const project = await projectWithSecrets(ctx.database.reader, request.auth.projectId);
      noStore(reply);
      return webhookSecretView(project, ctx.encryptionKey, Date.now());
    },
  );

  api.post(
    '/v1/projects/me/webhook-secret/rotate',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'Rotate the webhook signing secret',
        description:
          'Makes a new secret. The one it replaces keeps signing beside it for 24 h, so receivers can ' +
          'switch without missing a webhook; a secret replaced earlier stops at once. Takes no body ' +
          '(an empty JSON object is accepted).',
        security: BEARER,
        response: { 200: WebhookSecretView, ...errorResponses('validation_failed', 'invalid_json') },
      },
    },
    async (request, reply) => {
      checkEmptyBody(request.body);
      const now = Date.now();
      const project = await authorizedWrite(ctx, request, (trx) => rotateProjectWebhookSecret(trx, ctx.encryptionKey, request.auth.projectId, now));
      noStore(reply);
      return webhookSecretView(project, ctx.encryptionKey, now);
    },
  );
}
