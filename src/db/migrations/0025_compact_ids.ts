import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Bytes per message (issue 19), SQLite: message_events becomes a WITHOUT ROWID table keyed
// (message_id, id). Its rows are then stored in the order of a message's events — the order
// every read by message walks (a message's events, the event a delivery's body is rebuilt
// from, retention's delete by message) — so the index message_events_by_message and the primary
// key's own index on id (no query reads an event by its id alone; PostgreSQL dropped that key
// in 0023) are no longer separate B-trees. The feed keeps its index by (project_id, id), which
// now ends with the row's key (message_id) instead of a rowid. Ids stay unique by how they are
// made (domain/ids.ts), as on PostgreSQL since 0023. Rows live as long as their message.
//
// The table is rebuilt, every row copied as it was: nothing references message_events (no
// foreign key, trigger or view), and its own foreign key to messages is kept.
//
// PostgreSQL (no clustered table to fold an index into): the index by message of message_events
// keys the message id alone, not (message_id, id). A message has a handful of events, so B-tree
// deduplication stores each message's entries as one id and a list of row pointers (≈ 80 bytes a
// message instead of ≈ 260), and a read by message sorts its few rows (plan tests:
// test/db/queryPlans.test.ts). Every read of events by message has the message id as an equality
// and no range on id. (webhook_deliveries keeps (message_id, id): its list filtered by message
// pages by id, and without the id in that index PostgreSQL combined it with the project's index
// range of older ids — a read of the project's history.)
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop index if exists message_events_by_message`.execute(db);
    await sql`create index message_events_by_message on message_events (message_id)`.execute(db);
    return;
  }
  await sql`create table message_events_compact (
    id text not null,
    message_id text not null references messages (id) on delete cascade,
    project_id text not null,
    status text not null,
    occurred_at bigint not null,
    error text,
    created_at bigint not null,
    primary key (message_id, id)
  ) without rowid`.execute(db);
  await sql`insert into message_events_compact (id, message_id, project_id, status, occurred_at, error, created_at)
    select id, message_id, project_id, status, occurred_at, error, created_at from message_events`.execute(db);
  await sql`drop table message_events`.execute(db);
  await sql`alter table message_events_compact rename to message_events`.execute(db);
  await sql`create index message_events_by_project on message_events (project_id, id)`.execute(db);
}
