import { REPLY_EVENT, WEBHOOK_EVENTS } from '../../domain/webhookPayload.ts';
import { USER_AGENT } from '../../webhooks/deliver.ts';
import { webhookPayloadExample } from './examples.ts';

// The OpenAPI 3.1 `webhooks` section: what svc POSTs to a project's callbackUrl and webhook
// endpoints (spec §6, CONTRACT §6), one entry per event, with the signature headers.

const Timestamp = { type: 'string', format: 'date-time', examples: ['2026-11-22T10:00:00.000Z'] };

const MESSAGE_EVENTS = WEBHOOK_EVENTS.filter((event) => event.startsWith('message.') && event !== REPLY_EVENT);
const TEMPLATE_EVENTS = WEBHOOK_EVENTS.filter((event) => event.startsWith('template.'));
const OTHER_EVENTS = WEBHOOK_EVENTS.filter(
  (event) => !MESSAGE_EVENTS.includes(event) && !TEMPLATE_EVENTS.includes(event) && event !== REPLY_EVENT,
);

const PAYLOAD_SCHEMAS: Record<string, object> = {
  MessageWebhookPayload: {
    type: 'object',
    description: 'A message status change (spec §6). Every field but `error` is always present.',
    required: ['event', 'message_id', 'to', 'template', 'status', 'provider_message_id', 'occurred_at'],
    properties: {
      event: { type: 'string', enum: MESSAGE_EVENTS, description: 'The event type; equals the X-Service-Event header.' },
      message_id: { type: 'string', description: 'The id POST /v1/messages returned.', examples: ['msg_01jd2k3m4n5p6q7r8s9t0v1w2x'] },
      to: { type: 'string', description: 'The recipient, E.164.', examples: ['+5511987654321'] },
      template: { type: 'string', description: 'The template name.' },
      status: {
        type: 'string',
        enum: MESSAGE_EVENTS.map((event) => event.slice('message.'.length).toUpperCase()),
        description: 'The new status.',
      },
      provider_message_id: { type: 'string', description: 'The provider’s id of the message, for support escalations.' },
      occurred_at: { ...Timestamp, description: 'When the change happened; orders a message’s events.' },
      error: {
        type: 'object',
        description: 'On message.failed only: the provider’s error.',
        required: ['code', 'title', 'message'],
        properties: {
          code: { type: 'string', description: 'The provider’s code, e.g. "131026".' },
          title: { type: 'string' },
          message: { type: 'string' },
        },
      },
    },
  },
  MessageReplyWebhookPayload: {
    type: 'object',
    description: 'The recipient answered a message: tapped one of its quick-reply buttons, or wrote back in reply to it. The message’s status is unchanged.',
    required: ['event', 'event_id', 'message_id', 'to', 'template', 'reply', 'occurred_at'],
    properties: {
      event: { type: 'string', enum: [REPLY_EVENT], description: 'The event type; equals the X-Service-Event header.' },
      event_id: { type: 'string', description: 'The reply’s id, as in the message’s events.', examples: ['evt_01jd2k3m4n5p6q7r8s9t0v1w2x'] },
      message_id: { type: 'string', description: 'The message answered.', examples: ['msg_01jd2k3m4n5p6q7r8s9t0v1w2x'] },
      to: { type: 'string', description: 'The message’s recipient (who replied), E.164.', examples: ['+5511987654321'] },
      template: { type: 'string', description: 'The message’s template name.' },
      reply: {
        type: 'object',
        required: ['type', 'text'],
        properties: {
          type: { type: 'string', enum: ['button', 'text'], description: '`button`: a quick-reply tap; `text`: a written reply.' },
          text: { type: 'string', description: 'The button’s text, or what the recipient wrote.' },
          payload: { type: 'string', description: 'A button’s payload (the one sent with the message, else its text); never on text.' },
        },
      },
      occurred_at: { ...Timestamp, description: 'When the recipient answered.' },
    },
  },
  TemplateWebhookPayload: {
    type: 'object',
    description: 'A template’s review outcome, or a later status the provider gave it.',
    required: ['event', 'event_id', 'occurred_at', 'template'],
    properties: {
      event: { type: 'string', enum: TEMPLATE_EVENTS, description: 'The event type; equals the X-Service-Event header.' },
      event_id: { type: 'string', description: 'The id of this template event.' },
      occurred_at: Timestamp,
      template: {
        type: 'object',
        required: ['id', 'name', 'language', 'status'],
        properties: {
          id: { type: 'string', examples: ['tpl_01jd2k3m4n5p6q7r8s9t0v1w2x'] },
          name: { type: 'string' },
          language: { type: 'string' },
          status: { type: 'string', enum: ['PENDING', 'APPROVED', 'REJECTED'] },
          providerStatus: { type: 'string', description: 'The provider’s own status (e.g. PAUSED), when it has one.' },
          rejectionReason: { type: 'string', description: 'Why it was rejected (REJECTED only).' },
          reason: { type: 'string', description: 'The provider’s reason for its status.' },
        },
      },
    },
  },
  WebhookTestPayload: {
    type: 'object',
    description: 'A test event, sent on request (POST /v1/webhook-endpoints/{id}/test) to one endpoint.',
    required: ['event', 'event_id', 'occurred_at', 'endpoint_id'],
    properties: {
      event: { type: 'string', enum: OTHER_EVENTS.length > 0 ? OTHER_EVENTS : ['webhook.test'] },
      event_id: { type: 'string' },
      occurred_at: Timestamp,
      endpoint_id: { type: 'string', description: 'The endpoint it was sent to.' },
    },
  },
};

const header = (name: string, description: string, schema: object = { type: 'string' }) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
});

const SIGNATURE_HEADERS = [
  header('webhook-id', 'Standard Webhooks id: the same as X-Service-Delivery, the same on every retry; deduplicate by it.'),
  header('webhook-timestamp', 'Standard Webhooks timestamp: seconds since the epoch, the time of this attempt.', {
    type: 'string',
    pattern: '^[0-9]+$',
  }),
  header(
    'webhook-signature',
    'Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, one per live `whsec_` ' +
      'secret (two for 24 h after a rotation). Verify against the raw body; accept if any matches.',
  ),
  header('X-Service-Event', 'The event type, equal to the `event` field.'),
  header('X-Service-Delivery', 'A UUID per (event, destination), the same on every retry of that event.', {
    type: 'string',
    format: 'uuid',
  }),
  header('X-Service-Delivery-Attempt', 'The attempt number: 1, 2, …', { type: 'string', pattern: '^[1-9][0-9]*$' }),
  header('User-Agent', `Always \`${USER_AGENT}\`.`, { type: 'string', enum: [USER_AGENT] }),
];

/** The payload schemas of the events svc delivers, as named component schemas. */
export function webhookPayloadSchemas(): Record<string, object> {
  const names = new Set(WEBHOOK_EVENTS.map(payloadSchemaOf));
  return Object.fromEntries(Object.entries(structuredClone(PAYLOAD_SCHEMAS)).filter(([name]) => names.has(name)));
}

function payloadSchemaOf(event: string): string {
  if (event === REPLY_EVENT) return 'MessageReplyWebhookPayload';
  if (event.startsWith('message.')) return 'MessageWebhookPayload';
  if (event.startsWith('template.')) return 'TemplateWebhookPayload';
  return 'WebhookTestPayload';
}

function operationIdOf(event: string): string {
  const words = event.split(/[._]/);
  return words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('') + 'Webhook';
}

/** One webhooks entry per event svc can deliver. */
export function webhooksSection(): Record<string, object> {
  const section: Record<string, object> = {};
  for (const event of WEBHOOK_EVENTS) {
    section[event] = {
      post: {
        operationId: operationIdOf(event).replace(/^./, (first) => first.toLowerCase()),
        summary: `The ${event} event`,
        description:
          (MESSAGE_EVENTS.includes(event)
            ? 'POSTed to the project’s callbackUrl and to every enabled webhook endpoint subscribed to this event. '
            : 'POSTed to every enabled webhook endpoint subscribed to this event (never to the callbackUrl). ') +
          'Answer 2xx ' +
          'within the timeout (default 10 s) to acknowledge; anything else, redirects included, is retried with backoff, ' +
          'so the same event can arrive more than once.',
        tags: ['Webhooks'],
        security: [],
        parameters: SIGNATURE_HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: { $ref: `#/components/schemas/${payloadSchemaOf(event)}` }, example: webhookPayloadExample(event) },
          },
        },
        responses: {
          '200': { description: 'Any 2xx acknowledges the event.' },
          '400': { description: 'Any answer other than 2xx (or none in time) is a failed attempt, retried later.' },
        },
      },
    };
  }
  return section;
}
