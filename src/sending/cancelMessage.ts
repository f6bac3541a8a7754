import type { Db } from '../db/database.ts';
import { findMessage, lockMessages, type MessageRow } from '../db/messages.ts';
import { DomainError, errorOf, notFound } from '../errors.ts';
import { recordStatusChanges, type StatusRecording } from '../workers/statusChanges.ts';

// Canceling a message that has not been submitted. The dispatcher claims a message by setting a
// lease on it (db/claims.ts) and submits it only while it holds that lease; so a message may be
// canceled only while it is QUEUED and no live lease is on it. The row is locked first (PostgreSQL:
// a claim running now either committed before us, and we see its lease, or skips the locked row
// and then finds it no longer due), so a cancel and a claim never both win.

/**
 * A lease that ended less than this long ago still counts as held: the lease was set by another
 * process's clock, and a cancel must never win against a worker that still thinks it holds it.
 */
const LEASE_CLOCK_SLACK_MS = 2000;

export type CancelOutcome =
  | { kind: 'canceled'; message: MessageRow; webhooks: boolean }
  | { kind: 'unchanged'; message: MessageRow };

/** Cancels the project's message in the caller's transaction, with its event and webhooks. */
export async function cancelMessage(
  trx: Db,
  recording: StatusRecording,
  projectId: string,
  id: string,
  now: number,
): Promise<CancelOutcome> {
  const message = (await lockMessages(trx, [id])).get(id);
  if (message === undefined || message.project_id !== projectId) {
    throw notFound('message');
  }
  if (message.status === 'CANCELED') return { kind: 'unchanged', message };
  if (message.status !== 'QUEUED') {
    throw new DomainError('message_not_cancelable', { status: message.status });
  }
  if ((message.held_at ?? null) !== null) {
    throw errorOf('message_held_by_provider');
  }
  if (message.lease_expires_at !== null && message.lease_expires_at > now - LEASE_CLOCK_SLACK_MS) {
    throw errorOf('message_being_submitted');
  }
  const webhooks = await recordStatusChanges(trx, recording, [{ message, transitions: ['CANCELED'], occurredAt: now }], now);
  return { kind: 'canceled', message: (await findMessage(trx, projectId, id))!, webhooks };
}
