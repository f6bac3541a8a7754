import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The sending number's own throughput (messages per second) as the provider reports it; null
  // means SVC_PROVIDER_MAX_MPS.
  await db.schema.alterTable('projects').addColumn('provider_messages_per_second', 'integer').execute();
  // A reservation is one upsert: the window's budget travels with the row, and the row keeps
  // what the last reservation was granted so the statement can return it.
  await db.schema
    .alterTable('send_rate_windows')
    .addColumn('budget', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('send_rate_windows')
    .addColumn('granted', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
