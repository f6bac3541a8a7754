import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { eraseOwnProject } from '../../projects/projectErasure.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';

const Count = (description: string) => Type.Integer({ minimum: 0, description });

const ErasedProject = Type.Object({
  projectId: Type.String(),
  id: Type.String({ description: 'The same value as projectId.' }),
  erasedAt: Timestamp,
  erased: Type.Object(
    {
      apiKeys: Count('API keys, active or revoked.'),
      providerCredentials: Count('1 when provider credentials were saved.'),
      templates: Count('Templates, whatever their status.'),
      messages: Count('Messages, whatever their status.'),
      messageEvents: Count('Status changes of those messages.'),
      idempotencyKeys: Count('Idempotency-Key records.'),
      webhookDeliveries: Count('Webhook deliveries, whatever their status.'),
      webhookAttempts: Count('Attempts of those deliveries.'),
    },
    { description: 'How many records of each kind were erased.' },
  ),
});

export async function projectErasureRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.delete(
    '/v1/projects/me',
    {
      schema: {
        tags: ['Projects'],
        summary: 'Erase the project',
        description:
          'Erases the project with its API keys, provider credentials and callback URL, templates, messages ' +
          '(with their status history and idempotency records), its recipients’ joined identities (phone numbers and ' +
          'WhatsApp BSUIDs) and webhook deliveries (with their attempts), all at ' +
          'once: afterwards every key of the project is 401 and its ids are 404. Messages already handed to the ' +
          'provider may still reach their recipients. Cannot be undone.',
        security: BEARER,
        response: { 200: ErasedProject, ...errorResponses() },
      },
    },
    async (request) => {
      const { projectId, keyId } = request.auth;
      const erased = await authorizedWrite(ctx, request, (trx) => eraseOwnProject(trx, projectId, keyId), { workChecksKey: true });
      request.log.info({ projectId, erased }, 'project erased');
      return { projectId, id: projectId, erasedAt: iso(Date.now()), erased };
    },
  );
}
