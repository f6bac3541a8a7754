import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { MAX_REPLY_TEXT } from '../../domain/inboundMessages.ts';
import { advanceMessageNow, DEFAULT_REJECTION, replyToMessage, reviewTemplateNow } from '../../sandbox/testHelpers.ts';
import { authenticate, authorizedWrite } from '../auth.ts';
import type { HttpContext } from '../context.ts';
import { ReplyView, replyView } from '../replyView.ts';
import { BEARER, errorResponses, iso, Timestamp } from '../schemas.ts';
import { MessageView, messageView } from './messages.ts';
import { TemplateIdParams, templateView, TemplateView } from './templates.ts';

// Test helpers (CONTRACT §7): src/sandbox/testHelpers.ts.

const TAG = 'Test helpers (sandbox only)';
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
        summary: 'Review a template (sandbox)',
        description:
          'Settles the review of a PENDING template now. Sandbox only (404 under any other provider). Makes the review happen at once, with the given outcome, ' +
          'whatever the sandbox review rules would decide. A template already in the requested status is answered ' +
          'as it is (200); one already settled the other way is 409 template_not_pending. `reason` is used with ' +
          'REJECTED only and ignored with APPROVED.',
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
                description: `REJECTED only: the rejectionReason (default "${DEFAULT_REJECTION}"); ignored with APPROVED.`,
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
      const { projectId } = request.auth;
      const settled = await reviewTemplateNow(ctx, projectId, request.params.id, request.body, (work) => authorizedWrite(ctx, request, work));
      return templateView(settled);
    },
  );

  api.post(
    '/v1/test-helpers/messages/:id/advance',
    {
      schema: {
        tags: [TAG],
        summary: 'Advance a message (sandbox)',
        description:
          'Moves a message to a later status now. Sandbox only. Reports the status as the provider would — through the same path, so the state machine, ' +
          'events and webhooks all apply: skipped states are filled in (READ implies DELIVERED). The status the message ' +
          'already has is answered as it is (200); an earlier one, FAILED after READ, or any other status after READ or ' +
          'FAILED is 409 invalid_status_transition.',
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
      const advanced = await advanceMessageNow(ctx, projectId, request.params.id, request.body.status, (work) => authorizedWrite(ctx, request, work));
      return messageView(advanced);
    },
  );

  api.post(
    '/v1/test-helpers/messages/:id/reply',
    {
      schema: {
        operationId: 'replyToMessageInSandbox',
        tags: [TAG],
        summary: 'Reply to a message (sandbox)',
        description:
          'Simulates the recipient answering a message. Sandbox only. `buttonIndex`: a tap on that button of the message’s template (a QUICK_REPLY; its payload is the one ' +
          'the message was sent with, else the button’s text); `text`: a message written in reply. Give one of the two. ' +
          'Recorded as a provider’s reply would be: listed in the message’s events, emitted as `message.replied` to the ' +
          'webhook endpoints that take it (never the callbackUrl), and checked against the project’s opt-out keywords. ' +
          'The message’s status does not change. A canceled message is 409 invalid_status_transition.',
        security: BEARER,
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        body: Type.Object(
          {
            buttonIndex: Type.Optional(Type.Integer({ minimum: 0, maximum: 9, description: 'The button’s index in the template (0 first).' })),
            text: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_REPLY_TEXT, pattern: '\\S', description: 'A text reply.' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            id: Type.String({ description: 'The reply’s id: the `event_id` of its message.replied, and its id in the message’s events.' }),
            messageId: Type.String(),
            event: Type.Literal('message.replied'),
            reply: ReplyView,
            occurredAt: Timestamp,
            optedOut: Type.Boolean({ description: 'True when the reply was an opt-out keyword and suppressed the recipient.' }),
          }),
          ...errorResponses('validation_failed', 'invalid_json', 'not_found', 'invalid_status_transition'),
        },
      },
    },
    async (request) => {
      const { projectId } = request.auth;
      const now = Date.now();
      const result = await authorizedWrite(ctx, request, (trx) => replyToMessage(trx, ctx.notifier, projectId, request.params.id, request.body, now));
      if (result.enqueued) ctx.notifier.wakeLocal('webhooks');
      return {
        id: result.row.id,
        messageId: result.row.message_id,
        event: 'message.replied' as const,
        reply: replyView(result.row),
        occurredAt: iso(result.row.occurred_at),
        optedOut: result.optedOut.length > 0,
      };
    },
  );
}
