import type { Kysely } from 'kysely';

// WhatsApp as Meta runs it in 2026, on each message (kept as long as the message):
// - pricing: what Meta says the message costs, from its status webhooks' `pricing` object
//   (JSON { billable, pricingModel, category, type }); null until a status carries one.
// - held_at: when Meta held the message for quality assessment (portfolio pacing,
//   `message_status: held_for_quality_assessment`); null when it never was.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('pricing', 'text').execute();
  await db.schema.alterTable('messages').addColumn('held_at', 'bigint').execute();
}
