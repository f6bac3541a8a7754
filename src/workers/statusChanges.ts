import type { Db, DialectName } from '../db/database.ts';
import { insertMessageEvents, type MessageRow, updateMessage } from '../db/messages.ts';
import type { MessageStatus } from '../db/tables.ts';
import { newId } from '../domain/ids.ts';
import type { ReportedStatus } from '../domain/messageStatus.ts';
import type { ProviderError } from '../providers/provider.ts';
import { enqueueWebhookDelivery } from '../webhooks/enqueue.ts';
import type { Notifier } from './notifier.ts';

const TIMESTAMP_COLUMN = {
  SENT: 'sent_at',
  DELIVERED: 'delivered_at',
  READ: 'read_at',
  FAILED: 'failed_at',
} as const;

const UNEXPLAINED_FAILURE: ProviderError = {
  code: 'unknown',
  title: 'Message failed',
  message: 'The provider reported the failure without a reason.',
};

export interface StatusChange {
  message: MessageRow;
  /** The statuses to record, in order (from domain/messageStatus transitionsFor). */
  transitions: MessageStatus[];
  occurredAt: number;
  providerMessageId?: string;
  error?: ProviderError;
  /** Other columns to set in the same update (the dispatcher's attempt count). */
  alsoSet?: { attempts?: number };
}

/**
 * Records a message's status changes in the caller's transaction: the message row, one event per
 * status, and a webhook delivery per event — all or nothing, so no event is lost between them.
 * Returns whether webhooks were enqueued (the caller wakes the webhook worker after commit).
 */
export async function recordStatusChanges(
  trx: Db,
  dialect: DialectName,
  notifier: Notifier,
  change: StatusChange,
  now: number,
): Promise<boolean> {
  const { message, transitions } = change;
  if (transitions.length === 0) return false;
  // Clocks differ (a provider's, each process's): a change is never recorded as earlier than
  // the one before it, so occurred_at always orders a message's events.
  const occurredAt = Math.max(
    change.occurredAt,
    message.queued_at,
    message.sent_at ?? 0,
    message.delivered_at ?? 0,
    message.read_at ?? 0,
  );
  const providerMessageId = message.provider_message_id ?? change.providerMessageId ?? null;
  const final = transitions.at(-1)!;
  const timestamps: Partial<Record<(typeof TIMESTAMP_COLUMN)[ReportedStatus], number>> = {};
  for (const status of transitions) {
    if (status !== 'QUEUED') timestamps[TIMESTAMP_COLUMN[status]] = occurredAt;
  }
  // A FAILED message always says why (CONTRACT §1), even when the provider did not.
  const failure = change.error ?? UNEXPLAINED_FAILURE;
  const error = final === 'FAILED' ? JSON.stringify(failure) : message.error;
  await updateMessage(trx, message.id, {
    ...change.alsoSet,
    status: final,
    ...timestamps,
    provider_message_id: providerMessageId,
    error,
    // A reported message is no longer the dispatcher's to send.
    due_at: null,
    lease_expires_at: null,
    updated_at: now,
  });
  const events = transitions.map((status) => ({
    id: newId('evt', now),
    message_id: message.id,
    project_id: message.project_id,
    status,
    occurred_at: occurredAt,
    error: status === 'FAILED' ? JSON.stringify(failure) : null,
    created_at: now,
  }));
  await insertMessageEvents(trx, events);
  let enqueued = false;
  for (const event of events) {
    if (event.status === 'QUEUED') continue;
    const created = await enqueueWebhookDelivery(
      trx,
      dialect,
      notifier,
      {
        projectId: message.project_id,
        eventId: event.id,
        messageId: message.id,
        status: event.status as ReportedStatus,
        to: message.recipient,
        template: message.template_name,
        providerMessageId: providerMessageId ?? '',
        occurredAt,
        error: event.status === 'FAILED' ? failure : null,
      },
      now,
    );
    enqueued ||= created;
  }
  return enqueued;
}
