import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('components', 'text', (c) => c.notNull())
    .addColumn('rejection_reason', 'text')
    .addColumn('provider_template_id', 'text')
    .addColumn('review_due_at', 'bigint')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('templates_name_language', ['project_id', 'name', 'language'])
    .execute();
  await db.schema.createIndex('templates_by_project').on('templates').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('templates_review_due').on('templates').columns(['review_due_at']).execute();

  await db.schema
    .createTable('template_status_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('from_status', 'text')
    .addColumn('to_status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('template_status_events_by_template')
    .on('template_status_events')
    .columns(['template_id', 'id'])
    .execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('template_name', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('variables', 'text', (c) => c.notNull())
    .addColumn('header_variables', 'text')
    .addColumn('rendered', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('due_at', 'bigint')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('provider_message_id', 'text')
    .addColumn('error', 'text')
    .addColumn('queued_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .addColumn('delivered_at', 'bigint')
    .addColumn('read_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('messages_by_project').on('messages').columns(['project_id', 'id']).execute();
  await db.schema
    .createIndex('messages_by_project_status')
    .on('messages')
    .columns(['project_id', 'status', 'id'])
    .execute();
  await db.schema
    .createIndex('messages_by_project_recipient')
    .on('messages')
    .columns(['project_id', 'recipient', 'id'])
    .execute();
  await db.schema
    .createIndex('messages_by_project_template')
    .on('messages')
    .columns(['project_id', 'template_name', 'id'])
    .execute();
  await db.schema.createIndex('messages_due').on('messages').columns(['due_at']).execute();
  await db.schema.createIndex('messages_by_provider_id').on('messages').columns(['provider_message_id']).execute();

  await db.schema
    .createTable('message_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('message_events_by_message').on('message_events').columns(['message_id', 'id']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['project_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').columns(['expires_at']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('due_at', 'bigint')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_by_project')
    .on('webhook_deliveries')
    .columns(['project_id', 'id'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_by_message')
    .on('webhook_deliveries')
    .columns(['message_id', 'id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_by_event').on('webhook_deliveries').columns(['event_id']).execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['due_at']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('response_body', 'text')
    .execute();
  await db.schema
    .createIndex('webhook_attempts_by_delivery')
    .on('webhook_attempts')
    .columns(['delivery_id', 'attempt'])
    .execute();

  // The sandbox provider's own records: every submission it received, and the status reports it
  // has promised to make (durable, so a restart does not strand a message).
  await db.schema
    .createTable('sandbox_submissions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('provider_message_id', 'text')
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('submitted_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sandbox_submissions_by_message')
    .on('sandbox_submissions')
    .columns(['message_id'])
    .execute();
  await db.schema
    .createTable('sandbox_reports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('provider_message_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('sandbox_reports_due').on('sandbox_reports').columns(['due_at']).execute();

  // Sending pace per phone number across processes: messages sent in each second.
  await db.schema
    .createTable('send_rate_windows')
    .addColumn('phone_number_id', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('send_rate_windows_pk', ['phone_number_id', 'window_start'])
    .execute();
}
