import { sql } from 'kysely';
import type { Db } from './database.ts';
import { dialectOf, postgresStatement, statement } from './prepared.ts';
import type { SuppressionsTable } from './tables.ts';
import { newId } from '../domain/ids.ts';

// A project's suppression list (opt-outs): numbers it must not send to. Every change moves the
// project's suppression_version (and keeps suppression_count), in the same transaction: the send
// path checks a number against the list as of a version, and its commit re-reads the version.

export type SuppressionRow = SuppressionsTable;
export type SuppressionSource = 'api' | 'provider' | 'opt_out_keyword' | 'marketing_opt_out';
/** `all`: no send goes; `marketing`: only MARKETING templates are refused (Meta's marketing opt-out). */
export type SuppressionScope = 'all' | 'marketing';

// A `marketing` row suppresses a send of a MARKETING template only: the category is the last parameter.
const ONE_SQLITE = statement<{ phone_number: string }>(
  "select phone_number from suppressions where project_id = ? and phone_number = ? and (scope = 'all' or ? = 'MARKETING')",
);
const MANY_POSTGRES = postgresStatement<{ phone_number: string }>(
  'select phone_number from suppressions where project_id = $1 and phone_number = any($2::text[]) ' +
    "and (scope = 'all' or $3 = 'MARKETING')",
);

/**
 * Which of these numbers the project suppresses for a template of this category: one primary-key
 * lookup per number (SQLite), or one statement (PostgreSQL).
 */
export async function suppressedAmong(
  db: Db,
  projectId: string,
  numbers: readonly string[],
  category: string,
): Promise<Set<string>> {
  if (numbers.length === 0) return new Set();
  const unique = [...new Set(numbers)];
  const rows =
    dialectOf(db) === 'postgres'
      ? await MANY_POSTGRES.rows(db, [projectId, unique, category])
      : (await Promise.all(unique.map((number) => ONE_SQLITE.rows(db, [projectId, number, category])))).flat();
  return new Set(rows.map((row) => row.phone_number));
}

const BY_NUMBER = statement<SuppressionRow>('select * from suppressions where project_id = ? and phone_number = ?');

export async function findSuppression(db: Db, projectId: string, phoneNumber: string): Promise<SuppressionRow | undefined> {
  return (await BY_NUMBER.rows(db, [projectId, phoneNumber]))[0];
}

/** A page of the project's suppressions, newest first: `limit + 1` rows after the cursor. */
export async function listSuppressions(
  db: Db,
  projectId: string,
  page: { limit: number; beforeId?: string },
): Promise<SuppressionRow[]> {
  return db
    .selectFrom('suppressions')
    .selectAll()
    .where('project_id', '=', projectId)
    .$if(page.beforeId !== undefined, (query) => query.where('id', '<', page.beforeId!))
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

async function moveVersion(db: Db, projectId: string, countChange: number): Promise<void> {
  await sql`update projects set suppression_count = suppression_count + ${countChange},
    suppression_version = suppression_version + 1 where id = ${projectId}`.execute(db);
}

export interface NewSuppression {
  projectId: string;
  phoneNumber: string;
  reason: string | null;
  source: SuppressionSource;
  /** Default `all`. */
  scope?: SuppressionScope;
}

/**
 * Adds the numbers not suppressed yet (one already there is left as it is); returns those
 * added. Rows are written in (project, number) order, so concurrent additions never deadlock.
 */
export async function addSuppressions(db: Db, entries: readonly NewSuppression[], now: number): Promise<NewSuppression[]> {
  const sorted = [...entries].sort((a, b) =>
    a.projectId === b.projectId ? (a.phoneNumber < b.phoneNumber ? -1 : 1) : a.projectId < b.projectId ? -1 : 1,
  );
  const added: NewSuppression[] = [];
  const perProject = new Map<string, number>();
  for (const entry of sorted) {
    const inserted = await db
      .insertInto('suppressions')
      .values({
        project_id: entry.projectId,
        phone_number: entry.phoneNumber,
        id: newId('sup', now),
        reason: entry.reason,
        source: entry.source,
        scope: entry.scope ?? 'all',
        created_at: now,
      })
      .onConflict((conflict) => conflict.columns(['project_id', 'phone_number']).doNothing())
      .returning('phone_number')
      .executeTakeFirst();
    if (inserted === undefined) continue;
    added.push(entry);
    perProject.set(entry.projectId, (perProject.get(entry.projectId) ?? 0) + 1);
  }
  for (const [projectId, count] of perProject) await moveVersion(db, projectId, count);
  return added;
}

/** Removes a number from the list; false when it was not there. */
export async function deleteSuppression(db: Db, projectId: string, phoneNumber: string): Promise<boolean> {
  const deleted = await db
    .deleteFrom('suppressions')
    .where('project_id', '=', projectId)
    .where('phone_number', '=', phoneNumber)
    .executeTakeFirst();
  if (Number(deleted.numDeletedRows) === 0) return false;
  await moveVersion(db, projectId, -1);
  return true;
}

/**
 * Makes a number's `marketing` suppression one of every send (an opt-out keyword after Meta's
 * marketing opt-out); false when the number has no `marketing` row.
 */
export async function widenSuppression(db: Db, entry: NewSuppression): Promise<boolean> {
  const widened = await db
    .updateTable('suppressions')
    .set({ scope: 'all', source: entry.source, reason: entry.reason })
    .where('project_id', '=', entry.projectId)
    .where('phone_number', '=', entry.phoneNumber)
    .where('scope', '=', 'marketing')
    .executeTakeFirst();
  if (Number(widened.numUpdatedRows) === 0) return false;
  await moveVersion(db, entry.projectId, 0);
  return true;
}

/** Lifts a number's suppression of this source and scope only (Meta's marketing opt-out, resumed); false when there was none. */
export async function deleteSuppressionOf(
  db: Db,
  projectId: string,
  phoneNumber: string,
  kind: { source: SuppressionSource; scope: SuppressionScope },
): Promise<boolean> {
  const deleted = await db
    .deleteFrom('suppressions')
    .where('project_id', '=', projectId)
    .where('phone_number', '=', phoneNumber)
    .where('source', '=', kind.source)
    .where('scope', '=', kind.scope)
    .executeTakeFirst();
  if (Number(deleted.numDeletedRows) === 0) return false;
  await moveVersion(db, projectId, -1);
  return true;
}
