import type { Db } from '../db/database.ts';
import { type FeedEventRow, type FeedReplyRow, listEventsAfter } from '../db/events.ts';

/**
 * The project's message events (status changes and replies) after the event `after`, oldest
 * first: `limit + 1` of them, so the caller sees whether more follow.
 */
export function eventsAfter(db: Db, projectId: string, after: string, limit: number): Promise<(FeedEventRow | FeedReplyRow)[]> {
  return listEventsAfter(db, projectId, after, limit + 1);
}
