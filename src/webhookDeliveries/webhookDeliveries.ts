import type { Db } from '../db/database.ts';
import {
  type DeliveryFilter,
  type DeliveryWithAttempts,
  findWebhookDelivery,
  listWebhookDeliveries,
  requestWebhookRetry,
  requeueFailedDeliveries,
} from '../db/webhookDeliveries.ts';
import { DomainError, notFound } from '../errors.ts';
import type { Notifier } from '../workers/notifier.ts';

// The project's webhook delivery log: read it, retry one delivery now, recover the failed ones
// after a receiver's outage. A retry or recovery wakes the webhook workers (after commit: the
// caller calls notifier.wakeLocal).

/** How far back a recover may reach: about the retry schedule's span, with room to notice an outage. */
const RECOVER_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A page of the project's deliveries, newest first (`filter.limit` is the page size plus one). */
export function listDeliveries(db: Db, projectId: string, filter: DeliveryFilter): Promise<DeliveryWithAttempts[]> {
  return listWebhookDeliveries(db, projectId, filter);
}

export async function getDelivery(db: Db, projectId: string, id: string): Promise<DeliveryWithAttempts> {
  const found = UUID.test(id) ? await findWebhookDelivery(db, projectId, id.toLowerCase()) : undefined;
  if (!found) throw notFound('webhook delivery');
  return found;
}

/** Checks `since` before the write: 422 when it reaches further back than a recover may. */
export function checkRecoverSince(since: number, now: number): void {
  if (since < now - RECOVER_WINDOW_MS) {
    throw new DomainError('invalid_time_range', 'since must be at most 7 days ago.', {
      errors: [{ field: '/since', code: 'too_early', message: 'since must be at most 7 days ago.' }],
    });
  }
}

/** Re-queues the project's deliveries that failed at or after `since`; how many. */
export async function recoverFailedDeliveries(trx: Db, notifier: Notifier, projectId: string, since: number, now: number): Promise<number> {
  const count = await requeueFailedDeliveries(trx, projectId, since, now);
  if (count > 0) await notifier.notifyInTransaction(trx, 'webhooks');
  return count;
}

/** Checks the id's shape before the write: a malformed one is simply not found. */
export function checkDeliveryId(id: string): void {
  if (!UUID.test(id)) throw notFound('webhook delivery');
}

/** Attempts the delivery again now; the delivery as it then is. */
export async function retryDelivery(trx: Db, notifier: Notifier, projectId: string, given: string, now: number): Promise<DeliveryWithAttempts> {
  const id = given.toLowerCase(); // a UUID in any case, as GET reads it
  const found = (await requestWebhookRetry(trx, projectId, id, now)) ? await findWebhookDelivery(trx, projectId, id) : undefined;
  if (!found) throw notFound('webhook delivery');
  await notifier.notifyInTransaction(trx, 'webhooks');
  return found;
}
