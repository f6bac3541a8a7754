import type { Database, Db } from '../db/database.ts';
import { findMessageByProviderId, insertMessageReply, type MessageReplyRow } from '../db/messageReplies.ts';
import type { MessageRow } from '../db/messages.ts';
import { projectsSendingFrom } from '../db/projects.ts';
import { linkIdentities } from '../db/recipientLinks.ts';
import { newId } from '../domain/ids.ts';
import type { InboundMessage, MarketingPreference, Reply, UserIdChange } from '../domain/inboundMessages.ts';
import { reportedTime } from '../domain/reportedTime.ts';
import { REPLY_EVENT, replyWebhookPayload } from '../domain/webhookPayload.ts';
import { applyMarketingPreference, optOutByKeyword } from '../suppressions/optOut.ts';
import { enqueueWebhookEvents } from '../webhooks/enqueue.ts';
import type { Notifier } from '../workers/notifier.ts';

// Recipients' answers (CONTRACT §9). A reply to one of a project's messages is recorded on it and
// emitted as message.replied to the webhook endpoints that take it (never the callbackUrl); any
// inbound message may also be an opt-out keyword. The message's status never changes. Meta's
// webhook and the sandbox's reply helper both come here.

export interface ReplyDeps {
  database: Database;
  notifier: Notifier;
}

export interface RecordedReply {
  row: MessageReplyRow;
  /** False when this provider message was recorded before (a retried notification). */
  recorded: boolean;
  /** Projects that suppressed the sender because the reply is one of their opt-out keywords. */
  optedOut: string[];
}

/**
 * Records a reply on `message` and enqueues its message.replied deliveries, in the caller's
 * transaction; a provider message already recorded changes nothing. Returns whether a delivery was
 * made (wake the 'webhooks' channel after commit).
 */
export async function recordReplyTo(
  trx: Db,
  notifier: Notifier,
  message: MessageRow,
  inbound: { providerMessageId: string; reply: Reply; occurredAt: number },
  now: number,
): Promise<{ row: MessageReplyRow; recorded: boolean; enqueued: boolean }> {
  const row: MessageReplyRow = {
    id: newId('evt', now),
    project_id: message.project_id,
    message_id: message.id,
    provider_reply_id: inbound.providerMessageId,
    type: inbound.reply.type,
    text: inbound.reply.text,
    payload: inbound.reply.payload ?? null,
    // Not before the message was sent, nor later than now: a provider's clock is not trusted.
    occurred_at: reportedTime(inbound.occurredAt, { notBefore: message.sent_at ?? message.queued_at, now }),
    created_at: now,
  };
  const recorded = await insertMessageReply(trx, row);
  if (!recorded) return { row, recorded, enqueued: false };
  const enqueued = await enqueueWebhookEvents(
    trx,
    notifier,
    [
      {
        projectId: message.project_id,
        eventId: row.id,
        event: REPLY_EVENT,
        messageId: message.id,
        templateId: null,
        payload: replyWebhookPayload({
          eventId: row.id,
          messageId: message.id,
          to: message.recipient,
          template: message.template_name,
          reply: inbound.reply,
          occurredAt: row.occurred_at,
        }),
      },
    ],
    now,
  );
  return { row, recorded, enqueued };
}

/**
 * A reply made on a known message (the sandbox's helper): recorded, delivered, and checked
 * against the project's opt-out keywords, in the caller's transaction. The caller wakes the
 * 'webhooks' channel after commit when `enqueued`.
 */
export async function recordReplyOnMessage(
  trx: Db,
  notifier: Notifier,
  message: MessageRow,
  inbound: { providerMessageId: string; reply: Reply; occurredAt: number },
  now: number,
): Promise<RecordedReply & { enqueued: boolean }> {
  const { row, recorded, enqueued } = await recordReplyTo(trx, notifier, message, inbound, now);
  const optedOut = recorded ? await optOutByKeyword(trx, [message.project_id], message.recipient, inbound.reply, now) : [];
  return { row, recorded, optedOut, enqueued };
}

/**
 * One inbound message from the provider, to the number `phoneNumberId` names: a reply to the
 * message its `inReplyTo` names (of a project sending from that number) is recorded on it; its
 * text or button payload opts the sender out of every such project whose keyword it is. Returns
 * 'unknown' when no project here sends from the number (another app's or deployment's).
 */
export async function recordInboundMessage(deps: ReplyDeps, inbound: InboundMessage): Promise<'recorded' | 'unknown'> {
  const now = Date.now();
  let enqueued = false;
  const result = await deps.database.db.transaction().execute(async (trx) => {
    const owners = [...((await projectsSendingFrom(trx, [inbound.phoneNumberId])).get(inbound.phoneNumberId) ?? [])];
    if (owners.length === 0) return 'unknown';
    await joinSender(trx, owners, inbound, now);
    // Media, reactions, locations…: nothing svc reads, neither a reply nor a keyword.
    const reply = inbound.reply;
    if (reply === undefined) return 'recorded';
    const message = inbound.inReplyTo === undefined ? undefined : await findMessageByProviderId(trx, owners, inbound.inReplyTo);
    if (message !== undefined) {
      const recorded = await recordReplyTo(trx, deps.notifier, message, { ...inbound, reply }, now);
      enqueued = recorded.enqueued;
    }
    await optOutByKeyword(trx, owners, inbound.from, reply, now);
    return 'recorded';
  });
  if (enqueued) deps.notifier.wakeLocal('webhooks');
  return result;
}

/** Meta's marketing opt-out or its resumption, for every project sending from the number. */
export async function recordMarketingPreference(deps: ReplyDeps, preference: MarketingPreference): Promise<'recorded' | 'unknown'> {
  return deps.database.db.transaction().execute(async (trx) => {
    const owners = [...((await projectsSendingFrom(trx, [preference.phoneNumberId])).get(preference.phoneNumberId) ?? [])];
    if (owners.length === 0) return 'unknown';
    await joinSender(trx, owners, preference, Date.now());
    await applyMarketingPreference(trx, owners, preference, Date.now());
    return 'recorded';
  });
}

/** A sender named by phone and BSUID: the two are one user in each project sending from the number. */
async function joinSender(trx: Db, owners: readonly string[], sender: { from: string; fromUserId?: string }, now: number): Promise<void> {
  if (sender.fromUserId === undefined) return;
  for (const projectId of owners) await linkIdentities(trx, projectId, sender.from, sender.fromUserId, 'inbound', now);
}

/**
 * Meta's `user_changed_user_id`: the user's new BSUID joins the old one (and the phone, when
 * named) in every project sending from the number, so filters and suppressions by either find
 * the other's history.
 */
export async function recordUserIdChange(deps: ReplyDeps, change: UserIdChange): Promise<'recorded' | 'unknown'> {
  return deps.database.db.transaction().execute(async (trx) => {
    const owners = [...((await projectsSendingFrom(trx, [change.phoneNumberId])).get(change.phoneNumberId) ?? [])];
    if (owners.length === 0) return 'unknown';
    const now = Date.now();
    for (const projectId of owners) {
      if (change.oldUserId !== undefined) await linkIdentities(trx, projectId, change.oldUserId, change.newUserId, 'user_changed_user_id', now);
      if (change.phone !== undefined) await linkIdentities(trx, projectId, change.phone, change.newUserId, 'user_changed_user_id', now);
    }
    return 'recorded';
  });
}
