import type { Kysely } from 'kysely';

// Each worker process says, every few seconds, that it is alive and claiming: the API's /readyz
// tells "due work, but no worker claims it" from "a long backlog being worked through".
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('worker_heartbeats')
    .addColumn('worker_id', 'text', (c) => c.primaryKey())
    .addColumn('claimed_at', 'bigint', (c) => c.notNull())
    .execute();
}
