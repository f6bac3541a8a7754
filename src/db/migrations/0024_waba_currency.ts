import { type Kysely, sql } from 'kysely';

// What each WABA is billed in, and one reconciliation run at a time (README, "Cost"):
// - provider_accounts.currency: the WABA's currency as Meta reports it (GET /{waba-id}?fields=
//   currency), read with the account's other facts; null until read, or for the sandbox (then
//   SVC_RATE_CARD_CURRENCY applies). Lives as long as the account row.
// - job_leases: one row per periodic job that must run in one worker process at a time across
//   all of them (the cost reconciliation): who holds it, until when, and when the next run is due.
//   A fixed handful of rows, kept for the database's life.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('provider_accounts').addColumn('currency', 'text').execute();
  await db.schema
    .createTable('job_leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text')
    .addColumn('lease_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('next_run_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into job_leases (name, holder, lease_expires_at, next_run_at) values ('cost_reconciliation', null, 0, 0)`.execute(db);
}
