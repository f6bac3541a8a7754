import { type Kysely, sql } from 'kysely';

// Issue 12's send side: scheduled, canceled and batch sends, and the suppression list.
//
// - messages: scheduled_for (the sendAt asked for; due_at starts there), canceled_at, batch_id.
//   A batch's messages are found, and counted by status, through partial indexes that single
//   sends (batch_id null) never enter: their insert costs nothing more.
// - batches: one row per accepted batch, listed newest first per project.
// - suppressions: a project's opted-out numbers, one row per number (the primary key is the send's
//   lookup), paged by a time-sortable id.
// - projects.suppression_count / suppression_version: how many numbers the project suppresses,
//   and a counter moved by every change of its list. The send path remembers both per project and
//   the accept commit re-reads the version with the key it already reads, so a project without
//   suppressions pays no lookup, and a change made by any process is seen by the next send.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [column, type] of [
    ['scheduled_for', 'bigint'],
    ['canceled_at', 'bigint'],
    ['batch_id', 'text'],
  ] as const) {
    await db.schema.alterTable('messages').addColumn(column, type).execute();
  }
  await db.schema
    .createIndex('messages_by_batch')
    .on('messages')
    .columns(['batch_id', 'id'])
    .where(sql.ref('batch_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('messages_by_batch_status')
    .on('messages')
    .columns(['batch_id', 'status'])
    .where(sql.ref('batch_id'), 'is not', null)
    .execute();

  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('template_name', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('batches_by_project').on('batches').columns(['project_id', 'id']).execute();

  await db.schema
    .createTable('suppressions')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('phone_number', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('suppressions_pk', ['project_id', 'phone_number'])
    .execute();
  await db.schema.createIndex('suppressions_by_project').on('suppressions').columns(['project_id', 'id']).execute();

  await db.schema
    .alterTable('projects')
    .addColumn('suppression_count', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('projects')
    .addColumn('suppression_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
