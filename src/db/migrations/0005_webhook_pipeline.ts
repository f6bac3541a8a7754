import type { Kysely } from 'kysely';

// The webhook pipeline claims from the per-project queue index (0003), so the global due-time
// index only costs a write on every claim and every attempt: drop it. Receivers whose circuit is
// open are recorded so that the delivery log (read by any API process) can show why a delivery
// waits: one row per receiver origin while its circuit is open, none once it closes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due').execute();
  await db.schema
    .createTable('webhook_circuits')
    .addColumn('origin', 'text', (c) => c.primaryKey())
    .addColumn('opened_at', 'bigint', (c) => c.notNull())
    .addColumn('retry_at', 'bigint', (c) => c.notNull())
    .addColumn('cooldown_ms', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
