import type { WebhookStatus } from '../domain/webhookPayload.ts';
import type { Db } from './database.ts';
import { POSTGRES_PAGE_LIMIT } from './pageLimit.ts';
import { numbered, statement } from './prepared.ts';

// The project's message events as a feed (GET /v1/events): every status change with a webhook,
// and every reply (message_replies, whose ids are event ids too), oldest first, each with what its
// payload is built from. The events themselves are the record, so the feed holds every event
// whether or not a callback URL or endpoint was set.

export interface FeedEventRow {
  kind: 'status';
  id: string;
  message_id: string;
  status: WebhookStatus;
  occurred_at: number;
  /** JSON { code, title, message } for FAILED. */
  error: string | null;
  recipient: string;
  template_name: string;
  provider_message_id: string | null;
}

export interface FeedReplyRow {
  kind: 'reply';
  id: string;
  message_id: string;
  type: string;
  text: string;
  payload: string | null;
  occurred_at: number;
  recipient: string;
  template_name: string;
}

// The page is taken from the (project_id, id) index alone, in order, before any join: a join in
// the same query lets PostgreSQL read a small tenant's every event through a bitmap, join and sort
// them (O(tenant), seen at a million messages); the page's few messages are then read by key. On
// PostgreSQL the page's LIMIT is hidden from the planner (pageLimit.ts): from a cursor in a young
// tenant's history (all its events among the table's newest) it estimated a few rows where there
// were thousands, and read and sorted them all.
const eventsAfter = (limit: string) =>
  'select e.id, e.message_id, e.status, e.occurred_at, e.error, m.recipient, m.template_name, m.provider_message_id ' +
  'from (select id, project_id, message_id, status, occurred_at, error from message_events ' +
  `where project_id = ? and id > ? and status in ('SENT', 'DELIVERED', 'READ', 'FAILED', 'CANCELED') order by id limit ${limit}) e ` +
  'join messages m on m.id = e.message_id and m.project_id = e.project_id order by e.id';
const EVENTS_AFTER = statement<Omit<FeedEventRow, 'kind'>>(eventsAfter('?'), numbered(eventsAfter(POSTGRES_PAGE_LIMIT)));

const repliesAfter = (limit: string) =>
  'select r.id, r.message_id, r.type, r.text, r.payload, r.occurred_at, m.recipient, m.template_name ' +
  'from (select id, project_id, message_id, type, text, payload, occurred_at from message_replies ' +
  `where project_id = ? and id > ? order by id limit ${limit}) r ` +
  'join messages m on m.id = r.message_id and m.project_id = r.project_id order by r.id';
const REPLIES_AFTER = statement<Omit<FeedReplyRow, 'kind'>>(repliesAfter('?'), numbered(repliesAfter(POSTGRES_PAGE_LIMIT)));

/**
 * Up to `limit` of the project's events with an id after `after` ('' for the first), oldest
 * first: a range of each table's (project_id, id) index, merged by id.
 */
export async function listEventsAfter(db: Db, projectId: string, after: string, limit: number): Promise<(FeedEventRow | FeedReplyRow)[]> {
  const [statuses, replies] = await Promise.all([
    EVENTS_AFTER.rows(db, [projectId, after, limit]),
    REPLIES_AFTER.rows(db, [projectId, after, limit]),
  ]);
  const merged: (FeedEventRow | FeedReplyRow)[] = [
    ...statuses.map((row) => ({ kind: 'status' as const, ...row })),
    ...replies.map((row) => ({ kind: 'reply' as const, ...row })),
  ];
  return merged.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, limit);
}
