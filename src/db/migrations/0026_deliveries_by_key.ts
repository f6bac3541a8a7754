import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Bytes per message (issue 19): a webhook delivery is found by its key (project_id, id) alone —
// every query names the project, the worker's writes too (claims, leases, recorded attempts, the
// purge: db/webhookDeliveries.ts, db/claims.ts, db/retention.ts) — so no index of ids alone is
// kept.
//
// - PostgreSQL: the hash index of ids (webhook_deliveries_by_id, 123 bytes a message) goes. The
//   index by message keys the message id alone, as message_events' has since 0025: a message has
//   a handful of deliveries, and B-tree deduplication stores them as one key and a list of row
//   pointers (82 bytes a message instead of 287). Its reads have the message id as an equality
//   and sort its few rows; the log filtered by message reads them behind a fence
//   (webhookDeliveries.ts deliveriesOf), or the planner combined this index with the project's
//   key range of older ids. Cost: the table is not rewritten; the new index is built while writes
//   to the table wait (CREATE INDEX: a SHARE lock), one pass over the table.
// - SQLite: webhook_deliveries becomes a WITHOUT ROWID table keyed (project_id, id). The rows are
//   then stored in the order the delivery log pages them, so the index by project
//   (webhook_deliveries_by_project, 262 bytes a message) and the primary key's own index on id
//   (150) are no longer separate B-trees; the other indexes end with the key instead of a rowid
//   (the index by message grows by the project id). The table is rebuilt, every row copied as it
//   was: a copy of the table and its indexes, with the database locked meanwhile (on a big
//   database, run it with the service stopped). webhook_attempts is rebuilt too, without its
//   foreign key to the delivery's id (which a table keyed (project_id, id) cannot be referenced
//   by): its rows are deleted with their deliveries by retention and erasure (as on PostgreSQL
//   since 0014_keyed_by_project). Rows live as long as before: a delivery until its retention.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index if exists webhook_deliveries_by_id`.execute(db);
    await sql`drop index if exists webhook_deliveries_by_message`.execute(db);
    await sql`create index webhook_deliveries_by_message on webhook_deliveries (message_id)`.execute(db);
    return;
  }
  // Migrations run outside a transaction on SQLite, where this pragma takes effect.
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql`begin`.execute(db);
    await sql`create table webhook_deliveries_keyed (
      id text not null,
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
      template_id text,
      last_attempt_at bigint,
      last_status_code integer,
      last_duration_ms integer,
      last_error text,
      last_response_body text,
      primary key (project_id, id)
    ) without rowid`.execute(db);
    await sql`insert into webhook_deliveries_keyed
      select id, project_id, event_id, message_id, event, url, payload, status, attempt_count, due_at, lease_expires_at,
        created_at, updated_at, endpoint_id, template_id, last_attempt_at, last_status_code, last_duration_ms, last_error,
        last_response_body
      from webhook_deliveries`.execute(db);
    await sql`create table webhook_attempts_unreferenced (
      id text primary key,
      delivery_id text not null,
      attempt integer not null,
      at bigint not null,
      url text not null,
      status_code integer,
      duration_ms integer not null,
      error text,
      response_body text
    )`.execute(db);
    await sql`insert into webhook_attempts_unreferenced
      select id, delivery_id, attempt, at, url, status_code, duration_ms, error, response_body from webhook_attempts`.execute(db);
    await sql`drop table webhook_attempts`.execute(db);
    await sql`drop table webhook_deliveries`.execute(db);
    await sql`alter table webhook_deliveries_keyed rename to webhook_deliveries`.execute(db);
    await sql`alter table webhook_attempts_unreferenced rename to webhook_attempts`.execute(db);
    await sql`create index webhook_attempts_by_delivery on webhook_attempts (delivery_id, attempt)`.execute(db);
    await sql`create index webhook_deliveries_by_message on webhook_deliveries (message_id, project_id, id)`.execute(db);
    await sql`create index webhook_deliveries_queue on webhook_deliveries (project_id, due_at)
      where due_at is not null`.execute(db);
    await sql`create index webhook_deliveries_failed on webhook_deliveries (project_id, updated_at)
      where status = 'failed'`.execute(db);
    await sql`create index webhook_deliveries_failed_by_id on webhook_deliveries (project_id, id)
      where status = 'failed'`.execute(db);
    await sql`create index webhook_deliveries_rare_events on webhook_deliveries (project_id, event, id)
      where event not in ('message.sent', 'message.delivered', 'message.read')`.execute(db);
    await sql`create index webhook_deliveries_due_by_id on webhook_deliveries (project_id, id)
      where due_at is not null`.execute(db);
    // The planner's one fact about the key: a project has many deliveries. svc never analyzes
    // SQLite, and without statistics the planner takes `project_id = ?` to match about ten rows on
    // any index — so it walked the project's whole key (which returns rows in id order, with no
    // lookup) rather than the message's few deliveries or a partial index of failed ones. A row of
    // sqlite_stat1 for the key alone (the table's other indexes keep the planner's defaults) makes
    // every plan of test/db/queryPlans.test.ts what it was; no ANALYZE ever replaces it.
    await sql`analyze sqlite_schema`.execute(db);
    await sql`delete from sqlite_stat1 where tbl = 'webhook_deliveries'`.execute(db);
    await sql`insert into sqlite_stat1 (tbl, idx, stat)
      values ('webhook_deliveries', 'sqlite_autoindex_webhook_deliveries_1', '1000000 10000 1')`.execute(db);
    const broken = await sql`pragma foreign_key_check`.execute(db);
    if (broken.rows.length > 0) throw new Error('webhook_deliveries rebuild broke a foreign key');
    await sql`commit`.execute(db);
    await sql`analyze sqlite_schema`.execute(db); // loads that row into this connection's planner
  } catch (error) {
    await sql`rollback`.execute(db).catch(() => {});
    throw error;
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}
