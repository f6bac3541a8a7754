import type { Db } from './database.ts';
import type { WebhookDeliveriesTable as WebhookDeliveryRow } from './tables.ts';
import { MESSAGE_EVENTS, webhookPayload, type WebhookStatus } from '../domain/webhookPayload.ts';

// A message status event's delivery stores no body (payload ''): the body is rebuilt from the
// event (status, occurred_at, error) and its message (recipient, template name, provider id),
// for each attempt and for GET /v1/webhook-deliveries/{id}. None of them changes once the event
// is written: an event row is never updated; a message's recipient and template never change;
// its provider id is set once, by the change that records its SENT event (the events of a change
// are written with the id it sets, and no status follows FAILED or CANCELED). So every attempt
// signs the same bytes, those the events feed (GET /v1/events) shows for the event. A delivery
// lives no longer than its message (retention deletes a message's deliveries with it).

const STATUS_EVENTS: ReadonlySet<string> = new Set(MESSAGE_EVENTS);

/** Whether a delivery's body is rebuilt from its event rather than read from its row. */
export function isRebuiltPayload(row: Pick<WebhookDeliveryRow, 'payload' | 'event' | 'message_id'>): boolean {
  return row.payload === '' && row.message_id !== null && STATUS_EVENTS.has(row.event);
}

/**
 * The deliveries with their bodies: stored ones as they are, rebuilt ones from their events (one
 * statement for the lot, each event by its key). A delivery whose event is gone keeps payload ''.
 */
export async function withPayloads(db: Db, rows: readonly WebhookDeliveryRow[]): Promise<WebhookDeliveryRow[]> {
  const rebuilt = rows.filter(isRebuiltPayload);
  if (rebuilt.length === 0) return [...rows];
  const bodies = new Map<string, string>();
  for (let i = 0; i < rebuilt.length; i += 500) {
    const page = rebuilt.slice(i, i + 500);
    // Each event by its message's index (message_id, id): no index of events by id alone is
    // needed (on PostgreSQL there is none since migration 0023).
    const eventIds = [...new Set(page.map((row) => row.event_id))];
    const messageIds = [...new Set(page.map((row) => row.message_id!))];
    const projectIds = [...new Set(page.map((row) => row.project_id))];
    const sources = await db
      .selectFrom('message_events as e')
      .innerJoin('messages as m', (join) => join.onRef('m.project_id', '=', 'e.project_id').onRef('m.id', '=', 'e.message_id'))
      .select([
        'e.id',
        'e.project_id',
        'e.status',
        'e.occurred_at',
        'e.error',
        'm.id as message_id',
        'm.recipient',
        'm.template_name',
        'm.provider_message_id',
      ])
      .where('e.message_id', 'in', messageIds)
      .where('e.id', 'in', eventIds)
      .where('e.project_id', 'in', projectIds)
      .execute();
    for (const source of sources) {
      bodies.set(
        `${source.project_id} ${source.id}`,
        webhookPayload({
          status: source.status as WebhookStatus,
          messageId: source.message_id,
          to: source.recipient,
          template: source.template_name,
          providerMessageId: source.provider_message_id ?? '',
          occurredAt: Number(source.occurred_at),
          error: source.error === null ? null : JSON.parse(source.error),
        }),
      );
    }
  }
  return rows.map((row) => {
    if (!isRebuiltPayload(row)) return row;
    const payload = bodies.get(`${row.project_id} ${row.event_id}`);
    return payload === undefined ? row : { ...row, payload };
  });
}
