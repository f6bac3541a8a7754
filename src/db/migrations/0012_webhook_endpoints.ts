import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Webhook endpoints beside the project's callbackUrl, and deliveries that are not about a message.
//
// - webhook_endpoints: a project's extra receivers, each with its event filter (JSON array, or
//   null for every event) and an enabled flag; gone with the project.
// - webhook_deliveries: endpoint_id (null: the callbackUrl), template_id (template events), and
//   message_id may now be null (template and test events have no message). SQLite cannot drop a
//   NOT NULL, so there the table is rebuilt the way SQLite documents (foreign keys off, copy,
//   drop, rename), which leaves webhook_attempts' rows and their foreign key as they were.
// - The failed deliveries of a project by time of their last attempt (updated_at), for recover.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_by_project').on('webhook_endpoints').columns(['project_id', 'id']).execute();

  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table webhook_deliveries alter column message_id drop not null`.execute(db);
    await db.schema.alterTable('webhook_deliveries').addColumn('endpoint_id', 'text').execute();
    await db.schema.alterTable('webhook_deliveries').addColumn('template_id', 'text').execute();
  } else {
    await rebuildSqliteDeliveries(db);
  }
  await db.schema
    .createIndex('webhook_deliveries_failed')
    .on('webhook_deliveries')
    .columns(['project_id', 'updated_at'])
    .where(sql.ref('status'), '=', 'failed')
    .execute();
}

async function rebuildSqliteDeliveries(db: Kysely<unknown>): Promise<void> {
  // Migrations run outside a transaction on SQLite, where this pragma takes effect.
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql`begin`.execute(db);
    await sql`create table webhook_deliveries_new (
      id text primary key,
      project_id text not null references projects (id) on delete cascade,
      event_id text not null,
      message_id text,
      event text not null,
      url text not null,
      payload text not null,
      status text not null,
      attempt_count integer default 0 not null,
      due_at bigint,
      lease_expires_at bigint,
      created_at bigint not null,
      updated_at bigint not null,
      endpoint_id text,
      template_id text)`.execute(db);
    await sql`insert into webhook_deliveries_new (id, project_id, event_id, message_id, event, url, payload, status,
        attempt_count, due_at, lease_expires_at, created_at, updated_at)
      select id, project_id, event_id, message_id, event, url, payload, status,
        attempt_count, due_at, lease_expires_at, created_at, updated_at from webhook_deliveries`.execute(db);
    await sql`drop table webhook_deliveries`.execute(db);
    await sql`alter table webhook_deliveries_new rename to webhook_deliveries`.execute(db);
    await sql`create index webhook_deliveries_by_project on webhook_deliveries (project_id, id)`.execute(db);
    await sql`create index webhook_deliveries_by_message on webhook_deliveries (message_id, id)`.execute(db);
    await sql`create index webhook_deliveries_by_event on webhook_deliveries (event_id)`.execute(db);
    await sql`create index webhook_deliveries_queue on webhook_deliveries (project_id, due_at)
      where due_at is not null`.execute(db);
    const broken = await sql`pragma foreign_key_check`.execute(db);
    if (broken.rows.length > 0) throw new Error('webhook_deliveries rebuild broke a foreign key');
    await sql`commit`.execute(db);
  } catch (error) {
    await sql`rollback`.execute(db).catch(() => {});
    throw error;
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}
