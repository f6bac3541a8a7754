import { type Kysely, PostgresAdapter, sql } from 'kysely';
import type { Db } from '../database.ts';
import { storedDelivery, storedDeliveryId } from '../deliveryIds.ts';
import type { WebhookDeliveriesTable } from '../tables.ts';

// Bytes per message (issue 19), SQLite only: a webhook delivery's id (a UUID), its message id and
// its event id are stored as 16 bytes each instead of 36, 30 and 30 characters — in the row, in
// the index by message (message_id, project_id, id) and in webhook_attempts.delivery_id
// (db/deliveryIds.ts encodes and decodes them at the db layer's boundary; public ids are
// unchanged). Its created_at is null where its id (a UUIDv7 made at that millisecond) carries it
// (read back from the id). About 85 bytes less per delivery, 270 per message with three webhooks.
//
// The table is rebuilt in key order (project_id, id), each row copied with its ids encoded (the
// encoding is JavaScript's, so the rows pass through the process, 500 at a time), then the
// indexes and the planner's row of sqlite_stat1 (migration 0026) are made again; attempts get
// their delivery id encoded in place. Cost on a big database: a read and a write of the whole
// table and its indexes, with the database locked meanwhile — run it with the service stopped
// (measured on a copy of a 300,000-message database: see bench/README.md, "Branch hbytes5").
// PostgreSQL stores text as before: nothing to do.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  const tables = db as unknown as Db;
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql`begin`.execute(db);
    await sql`create table webhook_deliveries_bytes (
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
      created_at bigint,
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
    for (let after: { project_id: string; id: string } | undefined; ; ) {
      const from = after;
      const page = await tables
        .selectFrom('webhook_deliveries')
        .selectAll()
        .$if(from !== undefined, (query) => query.where(sql<boolean>`(project_id, id) > (${from!.project_id}, ${from!.id})`))
        .orderBy('project_id')
        .orderBy('id')
        .limit(500)
        .execute();
      if (page.length === 0) break;
      await (tables as unknown as Kysely<{ webhook_deliveries_bytes: WebhookDeliveriesTable }>)
        .insertInto('webhook_deliveries_bytes')
        .values(page.map((row) => storedDelivery(tables, row)))
        .execute();
      after = page.at(-1)!;
    }
    // The attempted deliveries' ids a page at a time (by webhook_attempts_by_delivery), not all at
    // once: a large file's distinct ids would take memory in proportion to it. Only text ids are
    // read (those made bytes sort after every text); a non-canonical one stays text, and the next
    // page starts after it.
    for (let after = ''; ; ) {
      const page = await tables
        .selectFrom('webhook_attempts')
        .select('delivery_id')
        .distinct()
        .where(sql<boolean>`typeof(delivery_id) = 'text'`)
        .where('delivery_id', '>', after)
        .orderBy('delivery_id')
        .limit(1000)
        .execute();
      if (page.length === 0) break;
      for (const { delivery_id: id } of page) {
        const stored = storedDeliveryId(tables, id);
        if (stored !== id) {
          await tables.updateTable('webhook_attempts').set({ delivery_id: stored as string }).where('delivery_id', '=', id).execute();
        }
      }
      after = page.at(-1)!.delivery_id;
    }
    await sql`drop table webhook_deliveries`.execute(db);
    await sql`alter table webhook_deliveries_bytes rename to webhook_deliveries`.execute(db);
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
    // The planner's one fact about the key, as migration 0026 wrote it (dropped with the table).
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
