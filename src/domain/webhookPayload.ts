// What a webhook says: the event name of each message status, the JSON body (spec §6, CONTRACT §1),
// and the order in which a message's events happen.

export type WebhookStatus = 'SENT' | 'DELIVERED' | 'READ' | 'FAILED' | 'CANCELED';

export const WEBHOOK_EVENTS = ['message.sent', 'message.delivered', 'message.read', 'message.failed', 'message.canceled'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

const EVENT_OF: Record<WebhookStatus, WebhookEvent> = {
  SENT: 'message.sent',
  DELIVERED: 'message.delivered',
  READ: 'message.read',
  FAILED: 'message.failed',
  CANCELED: 'message.canceled',
};

export function webhookEventOf(status: WebhookStatus): WebhookEvent {
  return EVENT_OF[status];
}

/**
 * The place of an event in a message's life. Statuses only move forward (QUEUED → SENT →
 * DELIVERED → READ, or FAILED from any state before READ), so this rank orders one message's
 * events as they happened, whichever process or clock recorded them.
 */
export const EVENT_RANK: Record<WebhookEvent, number> = {
  'message.sent': 1,
  'message.delivered': 2,
  'message.read': 3,
  'message.failed': 4,
  'message.canceled': 4,
};

export interface WebhookPayloadInput {
  status: WebhookStatus;
  messageId: string;
  to: string;
  template: string;
  providerMessageId: string;
  occurredAt: number;
  error?: { code: string; title: string; message: string } | null;
}

/** The JSON body, built once so that every attempt sends (and signs) the same bytes. */
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
