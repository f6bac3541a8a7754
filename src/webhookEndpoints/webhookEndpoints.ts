import type { Db } from '../db/database.ts';
import {
  deleteWebhookEndpoint,
  endpointEvents,
  findWebhookEndpoint,
  insertWebhookEndpointWithinCap,
  listWebhookEndpoints,
  updateWebhookEndpoint,
  type WebhookEndpointChanges,
  type WebhookEndpointRow,
} from '../db/webhookEndpoints.ts';
import { newId } from '../domain/ids.ts';
import { SUBSCRIBABLE_EVENTS, TEST_EVENT, testWebhookPayload } from '../domain/webhookPayload.ts';
import { DomainError, type FieldError, notFound, validationError } from '../errors.ts';
import { enqueueTestDelivery } from '../webhooks/enqueue.ts';
import { webhookUrlError } from '../webhooks/urlCheck.ts';
import type { Notifier } from '../workers/notifier.ts';

// Webhook endpoints: receivers beside the project's callbackUrl, each with an event filter. Every
// event goes to the callbackUrl (if set) and to each enabled endpoint whose filter takes it.
// Each function runs in the caller's transaction (or on a reader, for the reads).

/** The most endpoints a project may have: each event fans out to all of them. */
export const MAX_ENDPOINTS_PER_PROJECT = 20;

const EVENT_LIST = SUBSCRIBABLE_EVENTS.join(', ');
const ENDPOINT_ID = /^we_[0-9a-z]{26}$/;

export interface EndpointFields {
  url?: string;
  /** null: every event, including ones added later. */
  events?: string[] | null;
  enabled?: boolean;
  description?: string | null;
}

/** The events as stored (a JSON array without duplicates), or 422 naming the unknown ones. */
function storedEvents(events: string[] | null | undefined): string | null {
  if (events === undefined || events === null) return null;
  const unknown = events.filter((event) => !(SUBSCRIBABLE_EVENTS as readonly string[]).includes(event));
  if (unknown.length > 0) {
    const errors: FieldError[] = unknown.map((event) => ({
      field: `/events/${events.indexOf(event)}`,
      code: 'unknown_event',
      message: `'${event}' is not an event type; known: ${EVENT_LIST}.`,
    }));
    throw new DomainError('webhook_event_unknown', `Unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`, {
      errors,
    });
  }
  return JSON.stringify([...new Set(events)]);
}

async function checkUrl(url: string, allowPrivate: boolean): Promise<void> {
  const error = await webhookUrlError(url, allowPrivate, '/url');
  if (error) throw validationError([error]);
}

/** Checks what needs no database (the events, the URL and its addresses) before the write. */
export async function newWebhookEndpoint(
  projectId: string,
  fields: EndpointFields & { url: string },
  allowPrivateCallbacks: boolean,
  now: number,
): Promise<WebhookEndpointRow> {
  const events = storedEvents(fields.events);
  await checkUrl(fields.url, allowPrivateCallbacks);
  return {
    id: newId('we', now),
    project_id: projectId,
    url: fields.url,
    events,
    enabled: fields.enabled === false ? 0 : 1,
    description: fields.description ?? null,
    created_at: now,
    updated_at: now,
  };
}

/** Stores a checked endpoint (newWebhookEndpoint), unless the project already has the most it may. */
export async function createWebhookEndpoint(trx: Db, row: WebhookEndpointRow): Promise<void> {
  if (!(await insertWebhookEndpointWithinCap(trx, row, MAX_ENDPOINTS_PER_PROJECT))) {
    throw new DomainError('webhook_endpoint_limit_reached', { max: MAX_ENDPOINTS_PER_PROJECT });
  }
}

/** A page of the project's endpoints, newest first. */
export function listProjectWebhookEndpoints(db: Db, projectId: string, page: { limit: number; before?: string }): Promise<WebhookEndpointRow[]> {
  return listWebhookEndpoints(db, projectId, page);
}

/** The event types an endpoint receives, or null for every one. */
export { endpointEvents };

export async function getWebhookEndpoint(db: Db, projectId: string, id: string): Promise<WebhookEndpointRow> {
  const row = ENDPOINT_ID.test(id) ? await findWebhookEndpoint(db, projectId, id) : undefined;
  if (!row) throw notFound('webhook endpoint');
  return row;
}

/** The changes to an endpoint, checked before the write (the id's shape, the events, the URL). */
export async function endpointChanges(id: string, fields: EndpointFields, allowPrivateCallbacks: boolean, now: number): Promise<WebhookEndpointChanges> {
  if (!ENDPOINT_ID.test(id)) throw notFound('webhook endpoint');
  const changes: WebhookEndpointChanges = { updated_at: now };
  if (fields.events !== undefined) changes.events = storedEvents(fields.events);
  if (fields.url !== undefined) {
    await checkUrl(fields.url, allowPrivateCallbacks);
    changes.url = fields.url;
  }
  if (fields.enabled !== undefined) changes.enabled = fields.enabled ? 1 : 0;
  if (fields.description !== undefined) changes.description = fields.description;
  return changes;
}

export async function changeWebhookEndpoint(trx: Db, projectId: string, id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpointRow> {
  const row = await updateWebhookEndpoint(trx, projectId, id, changes);
  if (!row) throw notFound('webhook endpoint');
  return row;
}

/** Checks the id's shape before the write: a malformed one is simply not found. */
export function checkEndpointId(id: string): void {
  if (!ENDPOINT_ID.test(id)) throw notFound('webhook endpoint');
}

export async function removeWebhookEndpoint(trx: Db, projectId: string, id: string): Promise<void> {
  if (!(await deleteWebhookEndpoint(trx, projectId, id))) throw notFound('webhook endpoint');
}

/** Enqueues a signed test event to this endpoint only; the delivery's id. */
export async function sendTestEvent(trx: Db, notifier: Notifier, projectId: string, id: string, now: number): Promise<string> {
  const endpoint = await findWebhookEndpoint(trx, projectId, id);
  if (!endpoint) throw notFound('webhook endpoint');
  if (endpoint.enabled !== 1) throw new DomainError('webhook_endpoint_disabled');
  const eventId = newId('evt', now);
  return enqueueTestDelivery(
    trx,
    notifier,
    {
      projectId,
      eventId,
      event: TEST_EVENT,
      messageId: null,
      templateId: null,
      payload: testWebhookPayload({ eventId, endpointId: id, occurredAt: now }),
    },
    endpoint,
    now,
  );
}
