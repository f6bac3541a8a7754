import { type Kysely, sql } from 'kysely';

// Per-project queues for the continuous workers. A queued row (due_at set: a QUEUED message, a
// pending webhook delivery) sits in its project's slice of a partial index ordered by due time,
// so a worker finds every project with work in one seek per project (a loose index scan) and
// claims each project's head without walking anyone's backlog. Finished rows (due_at null) are
// not in these indexes at all.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('messages_due').execute();
  await db.schema
    .createIndex('messages_queue')
    .on('messages')
    .columns(['project_id', 'due_at'])
    .where(sql.ref('due_at'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_queue')
    .on('webhook_deliveries')
    .columns(['project_id', 'due_at'])
    .where(sql.ref('due_at'), 'is not', null)
    .execute();
}
