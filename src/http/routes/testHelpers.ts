import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { findMessage } from '../../db/messages.ts';
import { findTemplate, type TemplateRow } from '../../db/templates.ts';
import { UNDELIVERABLE } from '../../providers/sandbox/magicRecipients.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { ApiError, validationError } from '../errors.ts';
import { BEARER, errorResponses } from '../schemas.ts';
import { MessageView, messageView } from './messages.ts';
import { TemplateIdParams, templateNotFound, templateView, TemplateView } from './templates.ts';

// Test helpers (CONTRACT §7), like Stripe's test-mode helpers: they make the sandbox do now what
// it would do later. They act through the same provider inbound path as real provider reports.

const TAG = 'Test helpers (sandbox only)';
const DEFAULT_REJECTION = 'Rejected with the sandbox test helper.';

function notPending(template: TemplateRow): ApiError {
  return new ApiError(
    'template_not_pending',
    `The template is already ${template.status}; only a PENDING template can be reviewed.`,
  );
}

export async function testHelperRoutes(app: FastifyInstance, ctx: HttpContext): Promise<void> {
  // Under a real provider these paths do not exist (404): nothing can fake a real review.
  if (ctx.config.provider !== 'sandbox') return;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', authenticate(ctx));

  api.post(
    '/v1/test-helpers/templates/:id/review',
    {
      schema: {
        tags: [TAG],
        summary: 'Settle the review of a PENDING template now',
        description:
          'Sandbox only (404 under any other provider). Makes the review happen at once, with the given outcome, ' +
          'whatever the sandbox review rules would decide. A template that is not PENDING is 409 template_not_pending.',
        security: BEARER,
        params: TemplateIdParams,
        body: Type.Object(
          {
            status: Type.Enum(['APPROVED', 'REJECTED']),
            reason: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 1000,
                pattern: '\\S',
                description: `REJECTED only: the rejectionReason (default "${DEFAULT_REJECTION}").`,
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: TemplateView,
          ...errorResponses('validation_failed', 'invalid_json', 'not_found', 'template_not_pending'),
        },
      },
    },
    async (request) => {
      const { status, reason } = request.body;
      if (status === 'APPROVED' && reason !== undefined) {
        throw validationError([
          { field: '/reason', code: 'not_allowed', message: 'reason goes with status REJECTED only; remove it.' },
        ]);
      }
      const { projectId } = request.auth;
      // The key is re-checked and the template's owner confirmed before the provider path settles it.
      const template = await authorizedWrite(ctx, request, (trx) => findTemplate(trx, projectId, request.params.id));
      if (template === undefined) throw templateNotFound();
      if (template.status !== 'PENDING') throw notPending(template);
      const result = await ctx.inbound({
        kind: 'template',
        templateId: template.id,
        status,
        ...(status === 'REJECTED' && { reason: reason ?? DEFAULT_REJECTION }),
        occurredAt: Date.now(),
      });
      const settled = await findTemplate(ctx.database.db, projectId, template.id);
      if (result === 'unknown' || settled === undefined) throw templateNotFound();
      // 'unchanged': the review worker settled it first.
      if (result === 'unchanged') throw notPending(settled);
      return templateView(settled);
    },
  );

  api.post(
    '/v1/test-helpers/messages/:id/advance',
    {
      schema: {
        tags: [TAG],
        summary: 'Move a message to a later status now',
        description:
          'Sandbox only. Reports the status as the provider would — through the same path, so the state machine, ' +
          'events and webhooks all apply: skipped states are filled in (READ implies DELIVERED). A status that is not ' +
          'ahead of the current one (or FAILED after READ) is 409 invalid_status_transition.',
        security: BEARER,
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        body: Type.Object(
          { status: Type.Enum(['SENT', 'DELIVERED', 'READ', 'FAILED']) },
          { additionalProperties: false },
        ),
        response: {
          200: MessageView,
          ...errorResponses('validation_failed', 'invalid_json', 'not_found', 'invalid_status_transition'),
        },
      },
    },
    async (request) => {
      const { projectId } = request.auth;
      const { status } = request.body;
      const message = await authorizedWrite(ctx, request, (trx) => findMessage(trx, projectId, request.params.id));
      if (message === undefined) throw new ApiError('not_found', 'No message of this project has that id.');
      const result = await ctx.inbound({
        kind: 'message',
        messageId: message.id,
        providerMessageId: message.provider_message_id ?? `wamid.sandbox.helper.${message.id}`,
        status,
        occurredAt: Date.now(),
        ...(status === 'FAILED' && { error: UNDELIVERABLE }),
      });
      if (result === 'unchanged') {
        throw new ApiError(
          'invalid_status_transition',
          `The message is ${message.status}; it cannot move to ${status} (statuses never move backwards).`,
        );
      }
      const advanced = await findMessage(ctx.database.db, projectId, message.id);
      if (advanced === undefined) throw new ApiError('not_found', 'No message of this project has that id.');
      return messageView(advanced);
    },
  );
}
