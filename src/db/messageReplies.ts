import type { Db } from './database.ts';
import type { MessageRow } from './messages.ts';
import type { MessageRepliesTable } from './tables.ts';

// Replies to a project's messages (CONTRACT §9). A row lives as long as its message (the foreign
// key cascades, and the project's erasure removes it with the message).

export type MessageReplyRow = MessageRepliesTable;

/** Records a reply; false when the project already has this provider message (a retried notification). */
export async function insertMessageReply(db: Db, row: MessageReplyRow): Promise<boolean> {
  const inserted = await db
    .insertInto('message_replies')
    .values(row)
    .onConflict((conflict) => conflict.columns(['project_id', 'provider_reply_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** A message's replies, oldest first. */
export async function listMessageReplies(db: Db, projectId: string, messageId: string): Promise<MessageReplyRow[]> {
  return db
    .selectFrom('message_replies')
    .selectAll()
    .where('message_id', '=', messageId)
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
}

/** The message of one of these projects that the provider knows by this id (what a reply names), if any. */
export async function findMessageByProviderId(
  db: Db,
  projectIds: readonly string[],
  providerMessageId: string,
): Promise<MessageRow | undefined> {
  if (projectIds.length === 0) return undefined;
  return db
    .selectFrom('messages')
    .selectAll()
    .where('provider_message_id', '=', providerMessageId)
    .where('project_id', 'in', [...projectIds])
    .orderBy('id')
    .executeTakeFirst();
}
