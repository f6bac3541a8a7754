import type { Db } from './database.ts';
import { columnsOf, dialectOf, postgresStatement } from './prepared.ts';
import type { SandboxReportsTable, SandboxSubmissionsTable } from './tables.ts';

// The sandbox provider's records of the submissions it took and the status reports it promised,
// written for many submissions at once (its group commit). A message erased with its project
// while it was being submitted leaves no record behind.

export interface SandboxRecord {
  submission: SandboxSubmissionsTable;
  reports: SandboxReportsTable[];
}

/**
 * PostgreSQL: one statement for the whole group. The messages are key-share-locked, so an erasure
 * in progress either waits for this commit (and erases these records too) or has already
 * removed them; only records of messages still there are written; and the sandbox's report loop
 * is woken when reports were promised.
 */
const RECORD_POSTGRES = postgresStatement(`
  with live as (select id from messages where id = any($2::text[]) order by id for key share),
  submitted as (
    insert into sandbox_submissions (id, message_id, provider_message_id, recipient, outcome, submitted_at)
    select s.* from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
      as s(id, message_id, provider_message_id, recipient, outcome, submitted_at)
    where s.message_id in (select id from live)
  ),
  promised as (
    insert into sandbox_reports (id, message_id, provider_message_id, status, error, due_at, lease_expires_at)
    select r.*, null::bigint from unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[])
      as r(id, message_id, provider_message_id, status, error, due_at)
    where r.message_id in (select id from live)
    returning 1
  )
  select pg_notify($13, '') from (select 1) as once where exists (select from promised)`);

/** Writes the records of the messages that still exist; `channel` wakes the report loop on PostgreSQL. */
export async function insertSandboxRecords(
  trx: Db,
  records: readonly SandboxRecord[],
  channel: string | undefined,
): Promise<void> {
  if (records.length === 0) return;
  const dialect = dialectOf(trx);
  const submissions = records.map((record) => record.submission);
  const reports = records.flatMap((record) => record.reports);
  if (dialect === 'postgres') {
    await RECORD_POSTGRES.execute(trx, [
      ...columnsOf(submissions, ['id', 'message_id', 'provider_message_id', 'recipient', 'outcome', 'submitted_at']),
      ...columnsOf(reports, ['id', 'message_id', 'provider_message_id', 'status', 'error', 'due_at']),
      channel,
    ]);
    return;
  }
  const live = new Set(
    (
      await trx
        .selectFrom('messages')
        .select('id')
        .where('id', 'in', submissions.map((submission) => submission.message_id))
        .execute()
    ).map((row) => row.id),
  );
  const kept = records.filter((record) => live.has(record.submission.message_id));
  if (kept.length === 0) return;
  await trx.insertInto('sandbox_submissions').values(kept.map((record) => record.submission)).execute();
  const keptReports = kept.flatMap((record) => record.reports);
  if (keptReports.length > 0) await trx.insertInto('sandbox_reports').values(keptReports).execute();
}

/** How many times the sandbox took this message (its submissions). */
export async function countSandboxSubmissions(db: Db, messageId: string): Promise<number> {
  const row = await db
    .selectFrom('sandbox_submissions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('message_id', '=', messageId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Deletes these reports (made, or about a message that no longer exists). */
export async function deleteSandboxReports(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('sandbox_reports').where('id', 'in', [...ids]).execute();
}
