import { type Kysely, sql } from 'kysely';

// What messages cost (README, "Cost"):
// - messages.cost: JSON { amount, currency } of a delivered message Meta charged for, priced by
//   the operator's rate card when it was delivered; null when free, not yet delivered or not
//   on the card. Kept as long as the message.
// - message_costs: counters per project, UTC day of delivery, template, pricing category,
//   recipient country, market and currency — messages charged, their amount in millionths of the
//   currency unit, messages free and messages the card has no rate for. Written in the
//   transaction that records the delivery; read a page of days at a time. Kept as long as the
//   analytics counters (SVC_RETENTION_ANALYTICS).
// - cost_reconciliations: per project and UTC day, Meta's pricing_analytics totals beside svc's
//   and the differences, from the reconciliation job. Kept as long as the counters.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('cost', 'text').execute();
  await db.schema
    .createTable('message_costs')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('market', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('charged', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('amount_micros', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('free', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('unpriced', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('message_costs_pk', ['project_id', 'day', 'template', 'category', 'country', 'market', 'currency'])
    .execute();
  await db.schema
    .createTable('cost_reconciliations')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('checked_at', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('meta_messages', 'bigint', (c) => c.notNull())
    .addColumn('meta_amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('svc_messages', 'bigint', (c) => c.notNull())
    .addColumn('svc_amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('differences', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('cost_reconciliations_pk', ['project_id', 'day'])
    .execute();
  // Nothing to count from the past: no message has a cost before this migration.
  await sql`select 1`.execute(db);
}
