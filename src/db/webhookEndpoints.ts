import type { Db } from './database.ts';
import { dialectOf } from './prepared.ts';
import type { WebhookEndpointsTable } from './tables.ts';

// A project's webhook endpoints: receivers beside its callbackUrl, each with an event filter.
// Every query names the project, except the two that serve many projects at once (the fan-out of
// a batch of events and the delivery worker), which take the projects' ids.

export type WebhookEndpointRow = WebhookEndpointsTable;

/** The event types an endpoint receives, or null for every one. */
export function endpointEvents(row: Pick<WebhookEndpointRow, 'events'>): string[] | null {
  return row.events === null ? null : (JSON.parse(row.events) as string[]);
}

/**
 * Inserts the endpoint unless its project already has `max`; false when it has. The project row is
 * locked first (PostgreSQL), so two concurrent inserts cannot both pass the cap; in the caller's transaction.
 */
export async function insertWebhookEndpointWithinCap(db: Db, row: WebhookEndpointRow, max: number): Promise<boolean> {
  if (dialectOf(db) === 'postgres') {
    await db.selectFrom('projects').select('id').where('id', '=', row.project_id).forUpdate().execute();
  }
  const counted = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('project_id', '=', row.project_id)
    .executeTakeFirst();
  if (Number(counted?.count ?? 0) >= max) return false;
  await db.insertInto('webhook_endpoints').values(row).execute();
  return true;
}

export async function findWebhookEndpoint(db: Db, projectId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A page of the project's endpoints, newest first; `limit` is the page size plus one. */
export async function listWebhookEndpoints(
  db: Db,
  projectId: string,
  page: { limit: number; before?: string },
): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('project_id', '=', projectId)
    .$if(page.before !== undefined, (query) => query.where('id', '<', page.before!))
    .orderBy('id', 'desc')
    .limit(page.limit)
    .execute();
}

export type WebhookEndpointChanges = Partial<Pick<WebhookEndpointRow, 'url' | 'events' | 'enabled' | 'description'>> & {
  updated_at: number;
};

/** Updates an endpoint; returns it as it is now, or undefined when the project has no such endpoint. */
export async function updateWebhookEndpoint(
  db: Db,
  projectId: string,
  id: string,
  changes: WebhookEndpointChanges,
): Promise<WebhookEndpointRow | undefined> {
  await db.updateTable('webhook_endpoints').set(changes).where('project_id', '=', projectId).where('id', '=', id).execute();
  return findWebhookEndpoint(db, projectId, id);
}

export async function deleteWebhookEndpoint(db: Db, projectId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export interface Destinations {
  callbackUrl: string | null;
  /** Enabled endpoints, oldest first; `events` null: every event. */
  endpoints: { id: string; url: string; events: string[] | null }[];
}

/**
 * Where each of these projects' events go: the callbackUrl and the enabled endpoints, in one
 * statement read in the caller's transaction, so an endpoint committed by any process receives
 * the next event. Projects with neither are absent.
 */
export async function findDestinations(db: Db, projectIds: readonly string[]): Promise<Map<string, Destinations>> {
  const destinations = new Map<string, Destinations>();
  if (projectIds.length === 0) return destinations;
  const rows = await db
    .selectFrom('projects as p')
    .leftJoin('webhook_endpoints as w', (join) => join.onRef('w.project_id', '=', 'p.id').on('w.enabled', '=', 1))
    .select(['p.id as project_id', 'p.callback_url', 'w.id', 'w.url', 'w.events'])
    .where('p.id', 'in', [...new Set(projectIds)])
    .where((eb) => eb.or([eb('p.callback_url', 'is not', null), eb('w.id', 'is not', null)]))
    .orderBy('p.id')
    .orderBy('w.id')
    .execute();
  for (const row of rows) {
    let found = destinations.get(row.project_id);
    if (!found) {
      found = { callbackUrl: row.callback_url, endpoints: [] };
      destinations.set(row.project_id, found);
    }
    if (row.id !== null && row.url !== null) found.endpoints.push({ id: row.id, url: row.url, events: endpointEvents(row) });
  }
  return destinations;
}

/**
 * Every endpoint of these projects, enabled or not, as it is now: the worker deals its slots by
 * receiver, sends to an endpoint's current URL, and does not send to a disabled or deleted one.
 */
export async function findEndpointsOfProjects(db: Db, projectIds: readonly string[]): Promise<WebhookEndpointRow[]> {
  if (projectIds.length === 0) return [];
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('project_id', 'in', [...new Set(projectIds)])
    .orderBy('id')
    .execute();
}
