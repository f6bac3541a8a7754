import type { Db } from './database.ts';
import { dialectOf, postgresStatement, statement } from './prepared.ts';
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

interface PayloadSource {
  id: string;
  project_id: string;
  status: WebhookStatus;
  occurred_at: number | string;
  error: string | null;
  message_id: string;
  recipient: string;
  template_name: string;
  provider_message_id: string | null;
}

const COLUMNS =
  'e.id, e.project_id, e.status, e.occurred_at, e.error, m.id as message_id, m.recipient, m.template_name, m.provider_message_id';

// Each event by its message's index (message_id, id) and each message by its key: no index of
// events by id alone is needed (PostgreSQL has none since migration 0023). SQLite: one prepared
// statement per delivery (no round trip, no query to build); PostgreSQL: one for the lot.
const SOURCE_SQLITE = statement<PayloadSource>(
  `select ${COLUMNS} from message_events e join messages m on m.project_id = e.project_id and m.id = e.message_id
   where e.message_id = ? and e.id = ? and e.project_id = ?`,
);
const SOURCES_POSTGRES = postgresStatement<PayloadSource>(
  `select ${COLUMNS} from unnest($1::text[], $2::text[], $3::text[]) as k(project_id, message_id, id)
   join message_events e on e.message_id = k.message_id and e.id = k.id and e.project_id = k.project_id
   join messages m on m.project_id = e.project_id and m.id = e.message_id`,
);

async function sourcesOf(db: Db, rows: readonly WebhookDeliveryRow[]): Promise<PayloadSource[]> {
  if (dialectOf(db) === 'sqlite') {
    const sources: PayloadSource[] = [];
    for (const row of rows) sources.push(...(await SOURCE_SQLITE.rows(db, [row.message_id, row.event_id, row.project_id])));
    return sources;
  }
  const sources: PayloadSource[] = [];
  for (let i = 0; i < rows.length; i += 500) {
    const page = rows.slice(i, i + 500);
    sources.push(
      ...(await SOURCES_POSTGRES.rows(db, [page.map((row) => row.project_id), page.map((row) => row.message_id), page.map((row) => row.event_id)])),
    );
  }
  return sources;
}

/**
 * The deliveries with their bodies: stored ones as they are, rebuilt ones from their events. A
 * delivery whose event is gone keeps payload ''.
 */
export async function withPayloads(db: Db, rows: readonly WebhookDeliveryRow[]): Promise<WebhookDeliveryRow[]> {
  const rebuilt = rows.filter(isRebuiltPayload);
  if (rebuilt.length === 0) return [...rows];
  const bodies = new Map<string, string>();
  for (const source of await sourcesOf(db, rebuilt)) {
    bodies.set(
      `${source.project_id} ${source.id}`,
      webhookPayload({
        status: source.status,
        messageId: source.message_id,
        to: source.recipient,
        template: source.template_name,
        providerMessageId: source.provider_message_id ?? '',
        occurredAt: Number(source.occurred_at),
        error: source.error === null ? null : JSON.parse(source.error),
      }),
    );
  }
  return rows.map((row) => {
    if (!isRebuiltPayload(row)) return row;
    const payload = bodies.get(`${row.project_id} ${row.event_id}`);
    return payload === undefined ? row : { ...row, payload };
  });
}
