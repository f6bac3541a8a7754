import { type Kysely, sql } from 'kysely';

// Data lifecycle (issue 19): what a project keeps, and the purge's own bookkeeping.
//
// - projects.message_retention_ms / webhook_delivery_retention_ms: a project's own, shorter
//   retention (PUT /v1/projects/me/retention); null: the operator's (SVC_RETENTION_*).
// - retention_state: one row ('purge'), lives as long as the database. The lease makes one
//   worker process at a time run the purge (holder, lease_expires_at); next_run_at spaces runs
//   across processes; counts_rolled_up_through is the hour up to which every project's hourly
//   counters have been rolled up into daily rows, so a run reads only the hours since.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('message_retention_ms', 'bigint').execute();
  await db.schema.alterTable('projects').addColumn('webhook_delivery_retention_ms', 'bigint').execute();
  await db.schema
    .createTable('retention_state')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text')
    .addColumn('lease_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('next_run_at', 'bigint', (c) => c.notNull())
    .addColumn('counts_rolled_up_through', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into retention_state (name, holder, lease_expires_at, next_run_at, counts_rolled_up_through)
    values ('purge', null, 0, 0, 0)`.execute(db);
}
