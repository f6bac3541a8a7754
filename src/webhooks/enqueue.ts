import type { Db, DialectName } from '../db/database.ts';
import { findCallbackUrls, insertWebhookDeliveries } from '../db/webhookDeliveries.ts';
import { newUuid7 } from '../domain/uuid7.ts';
import { type WebhookStatus, webhookEventOf, webhookPayload } from '../domain/webhookPayload.ts';
import type { Notifier } from '../workers/notifier.ts';

// For a message's events view: its deliveries, and how the API shows one.
export {
  listDeliveriesForMessage,
  type WebhookDelivery,
  WebhookDeliveryView,
  webhookDeliveryView,
} from './deliveryView.ts';

export interface StatusEventForWebhook {
  projectId: string;
  /** message_events.id (prefix evt_). */
  eventId: string;
  messageId: string;
  status: WebhookStatus;
  /** E.164. */
  to: string;
  /** The template name. */
  template: string;
  /** The provider's id of the message; always known once it is SENT. */
  providerMessageId: string;
  /** Epoch milliseconds. */
  occurredAt: number;
  /** FAILED only. */
  error?: { code: string; title: string; message: string } | null;
}

/**
 * Inserts the delivery row (if the project has a callbackUrl) in the caller's transaction;
 * returns true if one was created. The caller wakes the 'webhooks' channel after commit.
 */
export async function enqueueWebhookDelivery(
  trx: Db,
  _dialect: DialectName,
  notifier: Notifier,
  event: StatusEventForWebhook,
  now: number,
): Promise<boolean> {
  return enqueueWebhookDeliveries(trx, notifier, [event], now);
}

/**
 * Inserts a delivery for each event whose project has a callbackUrl, in one statement, in the
 * caller's transaction; returns true if any was created.
 *
 * The delivery id is a UUID (version 7, so ids sort by creation time) that stays the same on
 * every attempt: it is X-Service-Delivery and webhook-id. The body is built here, once.
 */
export async function enqueueWebhookDeliveries(
  trx: Db,
  notifier: Notifier,
  events: readonly StatusEventForWebhook[],
  now: number,
): Promise<boolean> {
  if (events.length === 0) return false;
  const urls = await findCallbackUrls(
    trx,
    events.map((event) => event.projectId),
  );
  const rows = events.flatMap((event) => {
    const url = urls.get(event.projectId);
    if (!url) return [];
    return [
      {
        id: newUuid7(now),
        project_id: event.projectId,
        event_id: event.eventId,
        message_id: event.messageId,
        event: webhookEventOf(event.status),
        url,
        payload: webhookPayload(event),
        status: 'pending' as const,
        attempt_count: 0,
        due_at: now,
        lease_expires_at: null,
        created_at: now,
        updated_at: now,
      },
    ];
  });
  if (rows.length === 0) return false;
  await insertWebhookDeliveries(trx, rows);
  await notifier.notifyInTransaction(trx, 'webhooks');
  return true;
}
