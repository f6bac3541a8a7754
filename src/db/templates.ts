import { newId } from '../domain/ids.ts';
import type { TemplateComponent } from '../providers/provider.ts';
import { claimDue, nextDueAt } from './claims.ts';
import { isUniqueViolation } from './constraints.ts';
import type { Db, DialectName } from './database.ts';
import type { TemplateStatus, TemplateStatusEventsTable, TemplatesTable } from './tables.ts';

// Templates and their status history. Queries made for a customer are scoped by project; the
// review queue and provider reports are not, as a provider names a template by its id alone.

export type TemplateRow = TemplatesTable;
export type TemplateStatusEventRow = TemplateStatusEventsTable;

/** The components as submitted (stored as JSON text). */
export function componentsOf(row: Pick<TemplateRow, 'components'>): TemplateComponent[] {
  return JSON.parse(row.components) as TemplateComponent[];
}

async function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/**
 * Inserts a new PENDING template with its first status event. The (project, name, language)
 * unique constraint decides a race between two registrations: the loser gets 'name_language_taken'.
 * On PostgreSQL the failed insert aborts the enclosing transaction: the caller must roll it back.
 */
export async function insertTemplate(db: Db, row: TemplateRow): Promise<'inserted' | 'name_language_taken'> {
  try {
    await inTransaction(db, async (trx) => {
      await trx.insertInto('templates').values(row).execute();
      await trx
        .insertInto('template_status_events')
        .values({
          id: newId('tse', row.created_at),
          template_id: row.id,
          project_id: row.project_id,
          from_status: null,
          to_status: row.status,
          reason: null,
          occurred_at: row.created_at,
        })
        .execute();
    });
    return 'inserted';
  } catch (error) {
    const target = { constraint: 'templates_name_language', table: 'templates', columns: ['project_id', 'name', 'language'] };
    if (isUniqueViolation(error, target)) return 'name_language_taken';
    throw error;
  }
}

/**
 * Records what the provider answered to a new template's submission: its id there and when to
 * ask about the review. A template settled meanwhile (or deleted) is left alone.
 */
export async function recordTemplateSubmission(
  db: Db,
  id: string,
  submission: { providerTemplateId: string | null; reviewDueAt: number },
): Promise<void> {
  await db
    .updateTable('templates')
    .set({ provider_template_id: submission.providerTemplateId, review_due_at: submission.reviewDueAt })
    .where('id', '=', id)
    .where('status', '=', 'PENDING')
    .execute();
}

export async function findTemplate(db: Db, projectId: string, id: string): Promise<TemplateRow | undefined> {
  return db
    .selectFrom('templates')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findTemplateByNameAndLanguage(
  db: Db,
  projectId: string,
  name: string,
  language: string,
): Promise<TemplateRow | undefined> {
  return db
    .selectFrom('templates')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .where('language', '=', language)
    .executeTakeFirst();
}

/** One page, newest first, after the id `afterId` if given: `limit + 1` rows, so the caller can tell whether more follow. */
export async function listTemplates(
  db: Db,
  projectId: string,
  page: { limit: number; afterId?: string | undefined },
): Promise<TemplateRow[]> {
  return db
    .selectFrom('templates')
    .selectAll()
    .where('project_id', '=', projectId)
    .$if(page.afterId !== undefined, (query) => query.where('id', '<', page.afterId!))
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

/** Deletes a template (its status events go with it); returns it as it was, or undefined. */
export async function deleteTemplate(db: Db, projectId: string, id: string): Promise<TemplateRow | undefined> {
  const row = await findTemplate(db, projectId, id);
  if (row === undefined) return undefined;
  const result = await db
    .deleteFrom('templates')
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n ? row : undefined;
}

export interface TemplateStatusChange {
  to: Exclude<TemplateStatus, 'PENDING'>;
  reason: string | null;
  /** When the review happened, per the provider. */
  occurredAt: number;
  now: number;
}

/**
 * Settles a PENDING template as APPROVED or REJECTED and records the event, in one transaction.
 * Only PENDING moves: a duplicate or contradicting later report changes nothing ('unchanged').
 * The conditional update makes concurrent reports safe on both engines.
 */
export async function setTemplateStatus(
  db: Db,
  templateId: string,
  change: TemplateStatusChange,
): Promise<'applied' | 'unchanged' | 'unknown'> {
  return inTransaction(db, async (trx) => {
    const updated = await trx
      .updateTable('templates')
      .set({
        status: change.to,
        rejection_reason: change.to === 'REJECTED' ? change.reason : null,
        review_due_at: null,
        lease_expires_at: null,
        updated_at: change.now,
      })
      .where('id', '=', templateId)
      .where('status', '=', 'PENDING')
      .returning(['project_id'])
      .executeTakeFirst();
    if (updated === undefined) {
      const exists = await trx.selectFrom('templates').select('id').where('id', '=', templateId).executeTakeFirst();
      return exists ? 'unchanged' : 'unknown';
    }
    await trx
      .insertInto('template_status_events')
      .values({
        id: newId('tse', change.now),
        template_id: templateId,
        project_id: updated.project_id,
        from_status: 'PENDING',
        to_status: change.to,
        reason: change.reason,
        occurred_at: change.occurredAt,
      })
      .execute();
    return 'applied';
  });
}

/** A template's status history, oldest first. */
export async function listTemplateStatusEvents(
  db: Db,
  projectId: string,
  templateId: string,
): Promise<TemplateStatusEventRow[]> {
  return db
    .selectFrom('template_status_events')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('template_id', '=', templateId)
    .orderBy('id')
    .execute();
}

/** Claims PENDING templates whose review check is due (see claims.ts for the lease). */
export async function claimDueTemplateReviews(
  db: Db,
  dialect: DialectName,
  options: { now: number; limit: number; leaseMs: number },
): Promise<TemplateRow[]> {
  return claimDue(db, dialect, 'templates', { ...options, dueColumn: 'review_due_at' });
}

/** Asks again at `dueAt` and releases the claim; a template no longer PENDING is left alone. */
export async function rescheduleTemplateReview(db: Db, id: string, dueAt: number): Promise<void> {
  await db
    .updateTable('templates')
    .set({ review_due_at: dueAt, lease_expires_at: null })
    .where('id', '=', id)
    .where('status', '=', 'PENDING')
    .execute();
}

/** Takes a template that is not PENDING off the review queue. */
export async function clearTemplateReview(db: Db, id: string): Promise<void> {
  await db
    .updateTable('templates')
    .set({ review_due_at: null, lease_expires_at: null })
    .where('id', '=', id)
    .where('status', '<>', 'PENDING')
    .execute();
}

export async function nextTemplateReviewDueAt(db: Db): Promise<number | undefined> {
  return nextDueAt(db, 'templates', 'review_due_at');
}

/** Records the provider's id of a template found or submitted after registration (a later review check). */
export async function recordProviderTemplateId(db: Db, id: string, providerTemplateId: string): Promise<void> {
  await db.updateTable('templates').set({ provider_template_id: providerTemplateId }).where('id', '=', id).execute();
}

/** The templates a provider's id names (one per project that registered the same template there). */
export async function findTemplatesByProviderTemplateId(db: Db, providerTemplateId: string): Promise<TemplateRow[]> {
  return db.selectFrom('templates').selectAll().where('provider_template_id', '=', providerTemplateId).execute();
}
