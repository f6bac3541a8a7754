import type { MessageReplyRow } from '../db/messageReplies.ts';
import type { MessageEventRow } from '../db/messages.ts';
import type { MessageStatus } from '../db/tables.ts';

// A message's timeline (GET /v1/messages/{id}/events): its status changes and the recipient's
// replies, in the order they happened. A reply changes no status: it is shown with the status the
// message had when it came.

export type TimelineEntry =
  | { kind: 'status'; event: MessageEventRow }
  | { kind: 'reply'; reply: MessageReplyRow; status: MessageStatus };

/** The status events (in their order) with the replies placed among them by time; a tie keeps the status first. */
export function withReplies(events: readonly MessageEventRow[], replies: readonly MessageReplyRow[]): TimelineEntry[] {
  const timeline: TimelineEntry[] = [];
  let next = 0;
  for (const event of events) {
    while (next < replies.length && replies[next]!.occurred_at < event.occurred_at) {
      timeline.push(replyEntry(replies[next++]!, timeline));
    }
    timeline.push({ kind: 'status', event });
  }
  while (next < replies.length) timeline.push(replyEntry(replies[next++]!, timeline));
  return timeline;
}

function replyEntry(reply: MessageReplyRow, before: readonly TimelineEntry[]): TimelineEntry {
  const last = before.findLast((entry) => entry.kind === 'status');
  return { kind: 'reply', reply, status: last?.kind === 'status' ? last.event.status : 'QUEUED' };
}
