// What a webhook says: the event name of each message status, the JSON body (spec §6, CONTRACT §1),
// and the order in which a message's events happen; the template events and the test event.

export type WebhookStatus = 'SENT' | 'DELIVERED' | 'READ' | 'FAILED' | 'CANCELED';

export const MESSAGE_EVENTS = [
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'message.canceled',
] as const;

/**
 * A template's review outcome (template.approved, template.rejected) and the provider's own later
 * statuses of it (Meta pauses, flags, disables… an approved template).
 */
export const TEMPLATE_EVENTS = [
  'template.approved',
  'template.rejected',
  'template.paused',
  'template.flagged',
  'template.locked',
  'template.disabled',
  'template.deleted',
  'template.pending_deletion',
  'template.archived',
  'template.limit_exceeded',
  'template.in_appeal',
] as const;

/**
 * The recipient answered a message (CONTRACT §9): webhook endpoints only, never the spec's
 * callbackUrl, whose receivers expect a status change in every message.* body.
 */
export const REPLY_EVENT = 'message.replied';

/** Sent on request to one webhook endpoint only (POST /v1/webhook-endpoints/{id}/test). */
export const TEST_EVENT = 'webhook.test';

/** Every event an endpoint may subscribe to. */
export const SUBSCRIBABLE_EVENTS = [...MESSAGE_EVENTS, REPLY_EVENT, ...TEMPLATE_EVENTS] as const;
/** Every event a delivery may carry. */
export const WEBHOOK_EVENTS = [...SUBSCRIBABLE_EVENTS, TEST_EVENT] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export type TemplateEvent = (typeof TEMPLATE_EVENTS)[number];

const EVENT_OF: Record<WebhookStatus, (typeof MESSAGE_EVENTS)[number]> = {
  SENT: 'message.sent',
  DELIVERED: 'message.delivered',
  READ: 'message.read',
  FAILED: 'message.failed',
  CANCELED: 'message.canceled',
};

export function webhookEventOf(status: WebhookStatus): WebhookEvent {
  return EVENT_OF[status];
}

export interface WebhookPayloadInput {
  status: WebhookStatus;
  messageId: string;
  to: string;
  template: string;
  providerMessageId: string;
  occurredAt: number;
  error?: { code: string; title: string; message: string } | null;
}

/**
 * The JSON body of a status event: the same bytes for the same event, so that a body rebuilt from
 * the event for each attempt (db/webhookPayloads.ts) and for the events feed signs the same bytes.
 */
export function webhookPayload(input: WebhookPayloadInput): string {
  const body: Record<string, unknown> = {
    event: webhookEventOf(input.status),
    message_id: input.messageId,
    to: input.to,
    template: input.template,
    status: input.status,
    provider_message_id: input.providerMessageId,
    occurred_at: new Date(input.occurredAt).toISOString(),
  };
  if (input.status === 'FAILED' && input.error) {
    body.error = { code: input.error.code, title: input.error.title, message: input.error.message };
  }
  return JSON.stringify(body);
}

export interface TemplateWebhookInput {
  event: TemplateEvent;
  /** The template status event (tse_…) this reports. */
  eventId: string;
  templateId: string;
  name: string;
  language: string;
  /** svc's status after the change. */
  status: 'PENDING' | 'APPROVED' | 'REJECTED';
  /** The provider's own status, when it has one (PAUSED, DISABLED…). */
  providerStatus: string | null;
  /** Why: a rejection's reason, or the provider's reason for its status. */
  reason: string | null;
  occurredAt: number;
}

/** The body of a template event, in the style of spec §6. */
export function templateWebhookPayload(input: TemplateWebhookInput): string {
  const template: Record<string, unknown> = {
    id: input.templateId,
    name: input.name,
    language: input.language,
    status: input.status,
  };
  if (input.providerStatus !== null) template.providerStatus = input.providerStatus;
  if (input.status === 'REJECTED' && input.reason !== null) template.rejectionReason = input.reason;
  else if (input.reason !== null) template.reason = input.reason;
  return JSON.stringify({
    event: input.event,
    event_id: input.eventId,
    occurred_at: new Date(input.occurredAt).toISOString(),
    template,
  });
}

/**
 * The event a template change is reported as: the review's outcome when svc's status changed,
 * else the provider's new status (an approved template paused, reinstated, disabled…); undefined
 * for a provider status no event names.
 */
export function templateEventOf(change: {
  reviewed: 'APPROVED' | 'REJECTED' | undefined;
  providerStatus: string | undefined;
}): TemplateEvent | undefined {
  if (change.reviewed !== undefined) return change.reviewed === 'APPROVED' ? 'template.approved' : 'template.rejected';
  if (change.providerStatus === undefined) return undefined;
  const event = `template.${change.providerStatus.toLowerCase()}`;
  return (TEMPLATE_EVENTS as readonly string[]).includes(event) ? (event as TemplateEvent) : undefined;
}

export interface ReplyWebhookInput {
  /** The reply's id (evt_…, an event id). */
  eventId: string;
  messageId: string;
  /** The message's recipient (who replied), E.164. */
  to: string;
  template: string;
  reply: { type: 'button' | 'text'; text: string; payload?: string | null };
  occurredAt: number;
}

/** The body of message.replied: `{ event, event_id, message_id, to, template, reply, occurred_at }`. */
export function replyWebhookPayload(input: ReplyWebhookInput): string {
  const reply: Record<string, unknown> = { type: input.reply.type, text: input.reply.text };
  if (input.reply.payload !== undefined && input.reply.payload !== null) reply.payload = input.reply.payload;
  return JSON.stringify({
    event: REPLY_EVENT,
    event_id: input.eventId,
    message_id: input.messageId,
    to: input.to,
    template: input.template,
    reply,
    occurred_at: new Date(input.occurredAt).toISOString(),
  });
}

/** The body of a test event: what a receiver needs to check its signature and routing. */
export function testWebhookPayload(input: { eventId: string; endpointId: string; occurredAt: number }): string {
  return JSON.stringify({
    event: TEST_EVENT,
    event_id: input.eventId,
    occurred_at: new Date(input.occurredAt).toISOString(),
    endpoint_id: input.endpointId,
  });
}
