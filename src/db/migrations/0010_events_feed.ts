import type { Kysely } from 'kysely';

// GET /v1/events reads a project's status events in id order after a given id: one range scan
// of this index, however many events the project or the others have.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('message_events_by_project').on('message_events').columns(['project_id', 'id']).execute();
}
