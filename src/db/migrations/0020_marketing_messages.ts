import type { Kysely } from 'kysely';

// WhatsApp's Marketing Messages API and business-scoped user ids (issue 23).
//
// - projects.marketing_messages: how the project sends MARKETING templates — null (off: Cloud API's
//   /messages), 'fallback' (/marketing_messages, product_policy CLOUD_API_FALLBACK) or 'strict'
//   (/marketing_messages, STRICT). Lives with the project.
// - messages.send_route: the provider API that took the message ('cloud_api' or
//   'marketing_messages'); null until taken, and for the sandbox's Cloud-API-like sends before this
//   migration. Lives with the message.
// - messages.recipient_user_id / recipient_phone: the recipient's other identity when the provider
//   names it (the BSUID of a message sent to a phone number; the phone of one sent to a BSUID).
//   Live with the message.
// - recipient_links: identities of one WhatsApp user in a project (a phone number and its BSUIDs,
//   an old BSUID and its new one after `user_changed_user_id`), one row per ordered pair, so a
//   lookup by either side is one index range. Kept SVC_RETENTION_MESSAGES after last seen (the
//   messages they join are gone by then), and erased with the project.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('projects').addColumn('marketing_messages', 'text').execute();
  await db.schema.alterTable('messages').addColumn('send_route', 'text').execute();
  await db.schema.alterTable('messages').addColumn('recipient_user_id', 'text').execute();
  await db.schema.alterTable('messages').addColumn('recipient_phone', 'text').execute();
  await db.schema
    .createTable('recipient_links')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('identity', 'text', (c) => c.notNull())
    .addColumn('linked', 'text', (c) => c.notNull())
    /** status | inbound | user_changed_user_id */
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('seen_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('recipient_links_pk', ['project_id', 'identity', 'linked'])
    .execute();
  // The retention purge walks each project's links by last sight.
  await db.schema.createIndex('recipient_links_by_seen').on('recipient_links').columns(['project_id', 'seen_at']).execute();
}
