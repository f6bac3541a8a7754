import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Bytes per message (issue 19): a webhook delivery keeps its latest attempt in its own row, so a
// delivery answered at its first attempt needs no webhook_attempts row; earlier attempts of a
// retried delivery move to webhook_attempts when the next one is recorded. The delivery's body
// of a message status event is no longer stored (payload '' from now on): it is rebuilt from the
// event and its message, which never change once the event is written (db/webhookPayloads.ts).
// Rows written before keep their payload and their attempts rows, and are shown and sent as is.
//
// Indexes no query needs, on PostgreSQL (SQLite cannot drop a primary key without rebuilding the
// table): message_events' primary key on id (151 bytes a message) — events are read by their
// message (message_events_by_message: a message's events, and each event a delivery's body is
// rebuilt from) or their project (the feed), never by id alone; and webhook_attempts' on id
// (attempts are read and deleted by their delivery). Their ids stay unique by how they are made
// (domain/ids.ts: time and 80 random bits), as messages' have since 0014; no foreign key
// references either table.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table message_events drop constraint if exists message_events_pkey`.execute(db);
    await sql`alter table webhook_attempts drop constraint if exists webhook_attempts_pkey`.execute(db);
  }
  for (const [name, type] of [
    ['last_attempt_at', 'bigint'],
    ['last_status_code', 'integer'],
    ['last_duration_ms', 'integer'],
    ['last_error', 'text'],
    ['last_response_body', 'text'],
  ] as const) {
    await db.schema.alterTable('webhook_deliveries').addColumn(name, type).execute();
  }
}
