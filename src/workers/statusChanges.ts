import type { Db } from '../db/database.ts';
import { countStatusChanges } from '../db/messageCounts.ts';
import { insertMessageEvents, type MessageChanges, type MessageRow, updateMessages } from '../db/messages.ts';
import type { MessageStatus } from '../db/tables.ts';
import { newId } from '../domain/ids.ts';
import type { ReportedStatus } from '../domain/messageStatus.ts';
import type { ErrorClassOf, ProviderError } from '../providers/provider.ts';
import { suppressMarketingStopped, suppressOptedOutRecipients } from '../sending/autoSuppress.ts';
import { enqueueWebhookDeliveries, type StatusEventForWebhook } from '../webhooks/enqueue.ts';
import type { MessageCounters } from './messageCounters.ts';
import type { Notifier } from './notifier.ts';

const TIMESTAMP_COLUMN = {
  SENT: 'sent_at',
  DELIVERED: 'delivered_at',
  READ: 'read_at',
  FAILED: 'failed_at',
  CANCELED: 'canceled_at',
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
  /** Other columns to set in the same update (the dispatcher's attempt count, Meta's pricing). */
  alsoSet?: { attempts?: number; pricing?: string; send_route?: string; recipient_user_id?: string; recipient_phone?: string; cost?: string | null };
}

/** A message update that is not a status change (the dispatcher's attempt count, a retry time). */
export interface MessageUpdate {
  id: string;
  changes: MessageChanges;
}

/** What recording a status change needs of the running service. */
export interface StatusRecording {
  /** Told after commit that webhook deliveries were enqueued. */
  notifier: Notifier;
  /** SVC_AUTO_SUPPRESS: FAILED with an opted-out code suppresses the number (off when not given). */
  autoSuppress?: boolean;
  /** The provider's error classification (suppressions follow it); absent: no code means anything. */
  errorClassOf?: ErrorClassOf;
  /** The app's counters (messageCounters.ts); absent: not counted. */
  counters?: MessageCounters;
}

/**
 * Records status changes in the caller's transaction: each message row, one event per status,
 * and a webhook delivery per event — all or nothing, so no event is lost between them. Any number
 * of messages at once, in a fixed number of statements (the dispatcher records a whole group of
 * outcomes together); `otherUpdates` join the same bulk update. Returns whether webhooks were
 * enqueued (the caller wakes the webhook worker after commit).
 */
export async function recordStatusChanges(
  trx: Db,
  { notifier, autoSuppress = false, errorClassOf = () => undefined, counters }: StatusRecording,
  changes: readonly StatusChange[],
  now: number,
  otherUpdates: readonly MessageUpdate[] = [],
): Promise<boolean> {
  const updates: MessageUpdate[] = [...otherUpdates];
  const events: ReturnType<typeof eventsOf> = [];
  const webhooks: StatusEventForWebhook[] = [];
  for (const change of changes) {
    if (change.transitions.length === 0) continue;
    const planned = planStatusChange(change, now);
    updates.push(planned.update);
    const changeEvents = eventsOf(change, planned.occurredAt, planned.failure, now);
    events.push(...changeEvents);
    for (const event of changeEvents) {
      if (event.status === 'QUEUED') continue;
      webhooks.push({
        projectId: change.message.project_id,
        eventId: event.id,
        messageId: change.message.id,
        status: event.status as ReportedStatus,
        to: change.message.recipient,
        template: change.message.template_name,
        providerMessageId: planned.providerMessageId ?? '',
        occurredAt: planned.occurredAt,
        error: event.status === 'FAILED' ? planned.failure : null,
      });
    }
  }
  await updateMessages(trx, updates);
  await insertMessageEvents(trx, events);
  await countStatusChanges(trx, events, changes.map((change) => change.message));
  await suppressMarketingStopped(trx, changes, errorClassOf, now);
  if (autoSuppress) await suppressOptedOutRecipients(trx, changes, errorClassOf, now);
  if (counters) for (const event of events) counters.statusChanges.inc({ status: event.status });
  return enqueueWebhookDeliveries(trx, notifier, webhooks, now);
}

function planStatusChange(change: StatusChange, now: number) {
  const { message, transitions } = change;
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
  const update: MessageUpdate = {
    id: message.id,
    changes: {
      ...change.alsoSet,
      status: final,
      ...timestamps,
      provider_message_id: providerMessageId,
      error: final === 'FAILED' ? JSON.stringify(failure) : message.error,
      // A reported message is no longer the dispatcher's to send.
      due_at: null,
      lease_expires_at: null,
      updated_at: now,
    },
  };
  return { update, occurredAt, providerMessageId, failure };
}

function eventsOf(change: StatusChange, occurredAt: number, failure: ProviderError, now: number) {
  return change.transitions.map((status) => ({
    id: newId('evt', now),
    message_id: change.message.id,
    project_id: change.message.project_id,
    status,
    occurred_at: occurredAt,
    error: status === 'FAILED' ? JSON.stringify(failure) : null,
    created_at: now,
  }));
}
