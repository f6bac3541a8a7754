import { Type, type Static } from 'typebox';
import type { Db } from '../db/database.ts';
import {
  type DeliveryWithAttempts,
  listDeliveriesForMessage as listDeliveryRowsForMessage,
} from '../db/webhookDeliveries.ts';
import { WEBHOOK_EVENTS } from '../domain/webhookPayload.ts';

// A webhook delivery as the API shows it (CONTRACT §6): the delivery log of one event to one
// callback URL, with every attempt.

const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T10:00:00.000Z'] });

export const WebhookAttemptView = Type.Object({
  attempt: Type.Integer({ minimum: 1, description: 'The X-Service-Delivery-Attempt value: 1, 2, …' }),
  at: Timestamp,
  url: Type.String({ description: 'Where this attempt was sent.' }),
  statusCode: Type.Optional(Type.Integer({ description: 'The receiver’s HTTP status, when it answered.' })),
  durationMs: Type.Integer({ minimum: 0 }),
  error: Type.Optional(
    Type.String({ description: 'Why the attempt failed: timeout, connection error, redirect, refused address…' }),
  ),
  responseBody: Type.Optional(
    Type.String({ description: 'The first 1 KiB of the receiver’s answer (not in lists).' }),
  ),
});

export const WebhookDeliveryView = Type.Object({
  id: Type.String({
    format: 'uuid',
    description: 'X-Service-Delivery and webhook-id: the same on every attempt.',
    examples: ['019a5f3e-8c1d-7b2a-9e4f-0a1b2c3d4e5f'],
  }),
  eventId: Type.String({
    description: 'The event this delivery reports: a message status change (evt_…), a template status change (tse_…), or a test (evt_…).',
  }),
  event: Type.Union(WEBHOOK_EVENTS.map((event) => Type.Literal(event))),
  messageId: Type.Union([Type.String(), Type.Null()], {
    description: 'The message of a message event; null for template and test events.',
  }),
  templateId: Type.Union([Type.String(), Type.Null()], { description: 'The template of a template event; else null.' }),
  endpointId: Type.Union([Type.String(), Type.Null()], {
    description: 'The webhook endpoint it goes to; null when it goes to the project’s callbackUrl.',
  }),
  url: Type.String({
    description:
      'Where it goes: the callbackUrl (the project’s current one until the first attempt), or the endpoint’s current URL.',
  }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
  attempts: Type.Array(WebhookAttemptView),
  nextAttemptAt: Type.Optional(Timestamp),
  circuit: Type.Optional(
    Type.Object(
      {
        state: Type.Literal('open'),
        origin: Type.String({ description: 'The receiver (scheme://host:port) that keeps failing.' }),
        openedAt: Timestamp,
        retryAt: Timestamp,
        consecutiveFailures: Type.Integer({ minimum: 1 }),
        lastError: Type.Optional(Type.String()),
      },
      {
        description:
          'Present while the delivery waits because its receiver keeps failing: no attempt goes to the ' +
          'origin before `retryAt`, then one attempt probes it. Waiting is not an attempt: the retry ' +
          'schedule is unchanged.',
      },
    ),
  ),
  payload: Type.Optional(
    Type.String({ description: 'The JSON body sent, the same bytes on every attempt (GET /v1/webhook-deliveries/{id} only, not in lists).' }),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export type WebhookDeliveryViewType = Static<typeof WebhookDeliveryView>;

export interface WebhookAttempt {
  attempt: number;
  at: number;
  url: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
}

/** The open circuit of the receiver a pending delivery waits for. */
export interface WebhookCircuit {
  origin: string;
  openedAt: number;
  retryAt: number;
  consecutiveFailures: number;
  lastError: string | null;
}

/** A delivery and its attempts (times in epoch ms). */
export interface WebhookDelivery {
  id: string;
  eventId: string;
  event: string;
  messageId: string | null;
  templateId: string | null;
  endpointId: string | null;
  url: string;
  status: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: number | null;
  circuit: WebhookCircuit | null;
  createdAt: number;
  updatedAt: number;
  attempts: WebhookAttempt[];
}

export function webhookDeliveryOf({ delivery: row, attempts, circuit }: DeliveryWithAttempts): WebhookDelivery {
  const pending = row.status === 'pending';
  return {
    id: row.id,
    eventId: row.event_id,
    event: row.event,
    messageId: row.message_id,
    templateId: row.template_id,
    endpointId: row.endpoint_id,
    url: row.url,
    status: row.status,
    // Held by an open circuit, it is not attempted before the circuit's retry time.
    nextAttemptAt: pending && row.due_at !== null ? Math.max(row.due_at, circuit?.retry_at ?? 0) : null,
    circuit:
      pending && circuit
        ? {
            origin: circuit.origin,
            openedAt: circuit.opened_at,
            retryAt: circuit.retry_at,
            consecutiveFailures: circuit.failures,
            lastError: circuit.last_error,
          }
        : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    attempts: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      at: attempt.at,
      url: attempt.url,
      statusCode: attempt.status_code,
      durationMs: attempt.duration_ms,
      error: attempt.error,
      responseBody: attempt.response_body,
    })),
  };
}

/** A delivery in the API's shape. */
export function webhookDeliveryView(delivery: WebhookDelivery): WebhookDeliveryViewType {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    event: delivery.event as WebhookDeliveryViewType['event'],
    messageId: delivery.messageId,
    templateId: delivery.templateId,
    endpointId: delivery.endpointId,
    url: delivery.url,
    status: delivery.status,
    attempts: delivery.attempts.map((attempt) => ({
      attempt: attempt.attempt,
      at: new Date(attempt.at).toISOString(),
      url: attempt.url,
      ...(attempt.statusCode !== null && { statusCode: attempt.statusCode }),
      durationMs: attempt.durationMs,
      ...(attempt.error !== null && { error: attempt.error }),
      ...(attempt.responseBody !== null && { responseBody: attempt.responseBody }),
    })),
    ...(delivery.nextAttemptAt !== null && { nextAttemptAt: new Date(delivery.nextAttemptAt).toISOString() }),
    ...(delivery.circuit !== null && {
      circuit: {
        state: 'open' as const,
        origin: delivery.circuit.origin,
        openedAt: new Date(delivery.circuit.openedAt).toISOString(),
        retryAt: new Date(delivery.circuit.retryAt).toISOString(),
        consecutiveFailures: delivery.circuit.consecutiveFailures,
        ...(delivery.circuit.lastError !== null && { lastError: delivery.circuit.lastError }),
      },
    }),
    createdAt: new Date(delivery.createdAt).toISOString(),
    updatedAt: new Date(delivery.updatedAt).toISOString(),
  };
}

/** The same, lighter for lists: attempts without the receiver's answers. */
export function webhookDeliveryListView(delivery: WebhookDelivery): WebhookDeliveryViewType {
  const view = webhookDeliveryView(delivery);
  for (const attempt of view.attempts) delete attempt.responseBody;
  return view;
}

/** Every delivery of a message, oldest first; each names its `eventId` (render with webhookDeliveryView). */
export async function listDeliveriesForMessage(
  db: Db,
  projectId: string,
  messageId: string,
): Promise<WebhookDelivery[]> {
  return (await listDeliveryRowsForMessage(db, projectId, messageId)).map(webhookDeliveryOf);
}
