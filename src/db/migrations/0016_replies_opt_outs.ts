import type { Kysely } from 'kysely';

// Issue 21's replies and opt-outs (CONTRACT §9).
//
// - message_replies: what a recipient answered to one of the project's messages (a quick-reply tap
//   or a text in reply to it). A row lives as long as its message: the retention purge deletes it
//   with its message, and erasure with its project (no foreign key: on PostgreSQL a message's id
//   alone is not a unique key since 0014_keyed_by_project). Meta retries a notification until it is
//   acknowledged: the provider's id of the inbound message is unique per project, so a retry
//   records nothing twice.
// - projects.opt_out_keywords / opt_out_enabled: the project's opt-out keywords (JSON array; null:
//   the defaults) and whether an inbound keyword suppresses its sender (1, the default).
// - suppressions.scope: `all` (every send) or `marketing` (MARKETING templates only, Meta's
//   marketing opt-out). Rows made before are `all`, as they always acted.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('message_replies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('provider_reply_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('payload', 'text')
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('message_replies_by_message').on('message_replies').columns(['message_id', 'id']).execute();
  // GET /v1/events reads a project's replies in id order after a given id, beside its status events.
  await db.schema.createIndex('message_replies_by_project').on('message_replies').columns(['project_id', 'id']).execute();
  await db.schema
    .createIndex('message_replies_once')
    .on('message_replies')
    .columns(['project_id', 'provider_reply_id'])
    .unique()
    .execute();

  await db.schema.alterTable('projects').addColumn('opt_out_keywords', 'text').execute();
  await db.schema
    .alterTable('projects')
    .addColumn('opt_out_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable('suppressions')
    .addColumn('scope', 'text', (c) => c.notNull().defaultTo('all'))
    .execute();
}
