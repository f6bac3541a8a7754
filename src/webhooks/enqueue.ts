import type { Db } from '../db/database.ts';
import type { WebhookDeliveryRow } from '../db/webhookDeliveries.ts';
import { insertWebhookDeliveries } from '../db/webhookDeliveries.ts';
import { type Destinations, findDestinations } from '../db/webhookEndpoints.ts';
import { newUuid7 } from '../domain/uuid7.ts';
import { MESSAGE_EVENTS, type WebhookStatus, webhookEventOf } from '../domain/webhookPayload.ts';
import type { Notifier } from '../workers/notifier.ts';

/**
 * A status event as its rows say it (message_events and messages, written in the same
 * transaction): its body is rebuilt from those rows, so the fields here are what it will say.
 */
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
 * Any event to deliver: its name, what it is about, and its body (built once, sent as is), or ''
 * for a message status event, whose body is rebuilt from the event row (db/webhookPayloads.ts).
 */
export interface WebhookEventToDeliver {
  projectId: string;
  eventId: string;
  event: string;
  messageId: string | null;
  templateId: string | null;
  payload: string;
}

/**
 * Inserts the delivery rows of one message status event in the caller's transaction; returns true
 * if any was created. The caller wakes the 'webhooks' channel after commit.
 */
export async function enqueueWebhookDelivery(
  trx: Db,
  notifier: Notifier,
  event: StatusEventForWebhook,
  now: number,
): Promise<boolean> {
  return enqueueWebhookDeliveries(trx, notifier, [event], now);
}

/**
 * Message status events, each already written to message_events with its message in the caller's
 * transaction: delivered like any event, with the spec's payload rebuilt from that event row at
 * each attempt (not stored: it is the same bytes webhookPayload(event) makes now).
 */
export async function enqueueWebhookDeliveries(
  trx: Db,
  notifier: Notifier,
  events: readonly StatusEventForWebhook[],
  now: number,
): Promise<boolean> {
  return enqueueWebhookEvents(
    trx,
    notifier,
    events.map((event) => ({
      projectId: event.projectId,
      eventId: event.eventId,
      event: webhookEventOf(event.status),
      messageId: event.messageId,
      templateId: null,
      payload: '',
    })),
    now,
  );
}

/**
 * Fans each event out to its project's destinations — the callbackUrl, and every enabled endpoint
 * whose filter takes the event — one delivery per destination, in the caller's transaction:
 * one statement reads every destination of the batch's projects, one inserts the deliveries.
 * Returns true if any was created (the caller wakes the 'webhooks' channel after commit).
 *
 * A delivery id is a UUID (version 7, so ids sort by creation time) that stays the same on every
 * attempt: it is X-Service-Delivery and webhook-id, one per (event, destination).
 */
export async function enqueueWebhookEvents(
  trx: Db,
  notifier: Notifier,
  events: readonly WebhookEventToDeliver[],
  now: number,
): Promise<boolean> {
  if (events.length === 0) return false;
  const destinations = await findDestinations(
    trx,
    events.map((event) => event.projectId),
  );
  const rows = events.flatMap((event) => deliveriesOf(event, destinations.get(event.projectId), now));
  if (rows.length === 0) return false;
  await insertWebhookDeliveries(trx, rows);
  await notifier.notifyInTransaction(
    trx,
    'webhooks',
    rows.map((row) => row.project_id),
  );
  return true;
}

const CALLBACK_EVENTS: ReadonlySet<string> = new Set(MESSAGE_EVENTS);

function deliveriesOf(event: WebhookEventToDeliver, to: Destinations | undefined, now: number): WebhookDeliveryRow[] {
  if (!to) return [];
  const row = (url: string, endpointId: string | null): WebhookDeliveryRow => ({
    id: newUuid7(now),
    project_id: event.projectId,
    event_id: event.eventId,
    message_id: event.messageId,
    template_id: event.templateId,
    endpoint_id: endpointId,
    event: event.event,
    url,
    payload: event.payload,
    status: 'pending',
    attempt_count: 0,
    due_at: now,
    lease_expires_at: null,
    created_at: now,
    updated_at: now,
  });
  const rows: WebhookDeliveryRow[] = [];
  // The spec's callbackUrl gets the spec's payload only (message status events): a client that
  // uses only the spec never meets another shape (CONTRACT §3). Template events and replies go to
  // webhook endpoints.
  if (to.callbackUrl !== null && CALLBACK_EVENTS.has(event.event)) rows.push(row(to.callbackUrl, null));
  for (const endpoint of to.endpoints) {
    if (endpoint.events === null || endpoint.events.includes(event.event)) rows.push(row(endpoint.url, endpoint.id));
  }
  return rows;
}

/** One delivery of a test event to one endpoint, in the caller's transaction. */
export async function enqueueTestDelivery(
  trx: Db,
  notifier: Notifier,
  event: WebhookEventToDeliver,
  endpoint: { id: string; url: string },
  now: number,
): Promise<string> {
  const [row] = deliveriesOf(event, { callbackUrl: null, endpoints: [{ ...endpoint, events: null }] }, now);
  await insertWebhookDeliveries(trx, [row!]);
  await notifier.notifyInTransaction(trx, 'webhooks', [row!.project_id]);
  return row!.id;
}
