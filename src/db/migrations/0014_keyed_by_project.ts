import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Every page a tenant reads walks an index keyed by its project, in the order it returns rows,
// whatever the other tenants hold (issue 19).
//
// - PostgreSQL: messages and webhook_deliveries are keyed by (project_id, id). With the primary
//   key on id alone, the planner read a project's newest page by walking that key backwards and
//   filtering on the project — cheap by its estimate, which assumes a project's rows are spread
//   evenly over time — and read every newer row of every other project first (128,015 rows
//   removed by the filter for one page of a tenant whose messages were older than the others').
//   Now the only ordered index on id starts with project_id; lookups by id alone (workers,
//   provider reports) use a hash index, which cannot return rows in order, so no plan can walk
//   ids across projects again. A hash entry is also smaller than a B-tree's copy of the key, and
//   the separate (project_id, id) index is gone: fewer bytes per row. Ids stay unique by how
//   they are made (48 bits of time and 74 or 80 random bits, increasing within a process); the
//   foreign keys that needed a unique id (events → messages, attempts → deliveries) are dropped,
//   and erasure and retention delete those rows by their own keys.
// - Both: the delivery log's filters get indexes that return a page in order: failed and pending
//   deliveries (partial, so the rows of neither state that most deliveries end in never enter
//   them), and the rare event types (every event but sent/delivered/read, which are each about a
//   third of a project's deliveries and are read through the project's own index). The rare
//   list is db/deliveryEvents.ts's; test/db/queryPlans.test.ts fails if the two part.
// - Both: the index of deliveries by event id alone is dropped: no query reads it (a message's
//   deliveries are read through their message), and it cost 129 bytes per message on SQLite.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_by_event').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await keyByProjectPostgres(db, 'messages', 'messages_by_project');
    await keyByProjectPostgres(db, 'webhook_deliveries', 'webhook_deliveries_by_project');
  }
  await db.schema
    .createIndex('webhook_deliveries_failed_by_id')
    .on('webhook_deliveries')
    .columns(['project_id', 'id'])
    .where(sql.ref('status'), '=', 'failed')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_pending_by_id')
    .on('webhook_deliveries')
    .columns(['project_id', 'id'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await sql`create index webhook_deliveries_rare_events on webhook_deliveries (project_id, event, id)
    where event not in ('message.sent', 'message.delivered', 'message.read')`.execute(db);
}

async function keyByProjectPostgres(db: Kysely<unknown>, table: string, projectIndex: string): Promise<void> {
  const t = sql.table(table);
  // The foreign keys that reference this table's id (each needs the unique index on id).
  const referencing = await sql<{ table_name: string; name: string }>`
    select c.conrelid::regclass::text as table_name, c.conname as name from pg_constraint c
    where c.contype = 'f' and c.confrelid = ${table}::regclass`.execute(db);
  for (const { table_name, name } of referencing.rows) {
    await sql`alter table ${sql.raw(table_name)} drop constraint ${sql.ref(name)}`.execute(db);
  }
  await sql`alter table ${t} drop constraint ${sql.ref(`${table}_pkey`)}`.execute(db);
  await sql`create unique index ${sql.ref(`${table}_project_key`)} on ${t} (project_id, id)`.execute(db);
  await sql`alter table ${t} add constraint ${sql.ref(`${table}_pkey`)} primary key using index ${sql.ref(`${table}_project_key`)}`.execute(
    db,
  );
  await sql`drop index ${sql.ref(projectIndex)}`.execute(db);
  await sql`create index ${sql.ref(`${table}_by_id`)} on ${t} using hash (id)`.execute(db);
}
