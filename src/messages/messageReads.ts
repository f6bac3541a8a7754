import type { Db } from '../db/database.ts';
import { listMessageReplies } from '../db/messageReplies.ts';
import { findMessageCheckingKey, listMessageEvents, listMessages, type MessageFilter, type MessageRow } from '../db/messages.ts';
import { listDeliveriesForMessage } from '../webhooks/deliveryView.ts';
import { withReplies } from './messageTimeline.ts';

// Reading messages: one message, a page of them, a message's timeline. Each read also reads the
// caller's API key in the same statement, so a request authenticated from a cache is confirmed
// without a second round trip (the caller checks `key`).

/** The project's message with that id (if any), with the caller's key as the database has it now. */
export function findMessageForKey(db: Db, keyHash: string, projectId: string, id: string) {
  return findMessageCheckingKey(db, keyHash, projectId, id);
}

/** A page of the project's messages, newest first (`limit + 1` rows), with the caller's key. */
export function listMessagesForKey(db: Db, keyHash: string, projectId: string, filter: MessageFilter, page: { limit: number; beforeId?: string }) {
  return listMessages(db, keyHash, projectId, filter, page);
}

/** A message's status events and replies in order, with the webhook deliveries of the project's message. */
export async function messageTimeline(db: Db, message: MessageRow) {
  const [events, replies, deliveries] = await Promise.all([
    listMessageEvents(db, message),
    listMessageReplies(db, message.project_id, message.id),
    listDeliveriesForMessage(db, message.project_id, message.id),
  ]);
  return { entries: withReplies(events, replies), deliveries };
}
