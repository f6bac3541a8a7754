import { type Kysely, sql } from 'kysely';

// The delivery log's `status=pending` filter reads the due deliveries in id order through a
// partial index whose condition is `due_at is not null` (a delivery is due exactly while it is
// pending: enqueued, retried and claimed rows carry a due_at, finished ones none), no longer
// `status = 'pending'`. With that condition, SQLite (which svc never analyzes) took the index for
// the claim's check for an earlier pending event of the same message — its condition names
// `status = 'pending'` too — and walked every pending delivery of the project for each candidate
// instead of the message's own few: 3.2 ms a claim beside a 3,000-delivery backlog, 0.4 ms
// before; webhook deliveries/s fell to 0.7×. No query but the log's filter implies the new
// condition, so no other plan can take it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_pending_by_id').execute();
  await sql`create index webhook_deliveries_due_by_id on webhook_deliveries (project_id, id)
    where due_at is not null`.execute(db);
}
