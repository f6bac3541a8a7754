import type { WebhookStatus } from '../domain/webhookPayload.ts';
import type { Db } from './database.ts';
import { statement } from './prepared.ts';

// The project's message events as a feed (GET /v1/events): every status change with a webhook,
// oldest first, each with what its payload is built from. The status events themselves are the
// record (message_events), so the feed holds every event whether or not a callback URL was set.

export interface FeedEventRow {
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

// Walks the (project_id, id) index in order; the join reads each event's message by its key.
const EVENTS_AFTER = statement<FeedEventRow>(
  'select e.id, e.message_id, e.status, e.occurred_at, e.error, m.recipient, m.template_name, m.provider_message_id ' +
    'from message_events e join messages m on m.id = e.message_id ' +
    "where e.project_id = ? and e.id > ? and e.status in ('SENT', 'DELIVERED', 'READ', 'FAILED', 'CANCELED') and m.project_id = e.project_id " +
    'order by e.id limit ?',
);

/** Up to `limit` of the project's events with an id after `after` ('' for the first), oldest first. */
export async function listEventsAfter(db: Db, projectId: string, after: string, limit: number): Promise<FeedEventRow[]> {
  return EVENTS_AFTER.rows(db, [projectId, after, limit]);
}
