import { type Kysely, sql } from 'kysely';

// Analytics counters: how many messages of a project reached each status in each UTC hour, by
// template and language (QUEUED: accepted). Kept up to date in the transactions that accept
// messages and record status changes, so a page of buckets reads at most one row per hour and
// key, whatever the project's size. The history already recorded is counted once, here.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('message_counts')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('hour', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('template', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('message_counts_pk', ['project_id', 'hour', 'status', 'template', 'language'])
    .execute();
  await sql`
    insert into message_counts (project_id, hour, status, template, language, count)
    select project_id, hour, status, template, language, count(*) from (
      select m.project_id, (m.queued_at / 3600000) * 3600000 as hour, 'QUEUED' as status,
        m.template_name as template, m.language
      from messages m
      union all
      select m.project_id, (e.occurred_at / 3600000) * 3600000, e.status, m.template_name, m.language
      from message_events e join messages m on m.id = e.message_id
      where e.status <> 'QUEUED'
    ) changes
    group by project_id, hour, status, template, language`.execute(db);
}
