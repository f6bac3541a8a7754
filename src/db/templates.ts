import { newId } from '../domain/ids.ts';
import type { TemplateComponent } from '../providers/provider.ts';
import { claimDue, nextDueAt } from './claims.ts';
import { isUniqueViolation } from './constraints.ts';
import type { Db } from './database.ts';
import { dialectOf } from './prepared.ts';
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
  /** The review outcome, applied to a PENDING template only; absent when the report settles nothing. */
  to: Exclude<TemplateStatus, 'PENDING'> | undefined;
  /**
   * The provider's own status (APPROVED, PAUSED, DISABLED…), recorded whatever svc's status is;
   * undefined: a review alone, which changes a PENDING template only (its status is then `to`).
   */
  providerStatus: string | undefined;
  reason: string | null;
  /** When it happened, per the provider: a report older than the last one applied changes nothing. */
  occurredAt: number;
  now: number;
  /** Runs in the same transaction once the change is written (webhooks/templateEvents.ts enqueues its event). */
  onApplied?: (trx: Db, applied: AppliedTemplateStatus) => Promise<void>;
}

/** A template status change as written. */
export interface AppliedTemplateStatus {
  template: Pick<TemplateRow, 'id' | 'project_id' | 'name' | 'language' | 'status'>;
  /** The review's outcome, when this change settled a PENDING template. */
  reviewed: Exclude<TemplateStatus, 'PENDING'> | undefined;
  /** The template_status_events row of a review's outcome. */
  eventId: string | undefined;
  providerStatus: string | undefined;
  previousProviderStatus: string | null;
  reason: string | null;
  occurredAt: number;
}

/**
 * Applies a provider's report on a template, in one transaction: a PENDING template is settled as
 * APPROVED or REJECTED (with its status event), and the provider's own status is recorded. A
 * duplicate, or a report older than the last one applied, changes nothing ('unchanged'). The row
 * is locked (PostgreSQL) or the writer is single (SQLite), so concurrent reports are safe.
 */
export async function setTemplateStatus(
  db: Db,
  templateId: string,
  change: TemplateStatusChange,
): Promise<'applied' | 'unchanged' | 'unknown'> {
  const dialect = dialectOf(db);
  return inTransaction(db, async (trx) => {
    const row = await trx
      .selectFrom('templates')
      .select(['project_id', 'name', 'language', 'status', 'provider_status', 'provider_status_reason', 'provider_status_at'])
      .where('id', '=', templateId)
      .$if(dialect === 'postgres', (query) => query.forUpdate())
      .executeTakeFirst();
    if (row === undefined) return 'unknown';
    const to = row.status === 'PENDING' ? change.to : undefined;
    const providerStatus = change.providerStatus ?? to;
    const stale = row.provider_status_at !== null && change.occurredAt < row.provider_status_at;
    const sameState = row.provider_status === providerStatus && row.provider_status_reason === change.reason;
    if (to === undefined && (providerStatus === undefined || stale || sameState)) return 'unchanged';
    await trx
      .updateTable('templates')
      .set({
        ...(to !== undefined && {
          status: to,
          rejection_reason: to === 'REJECTED' ? change.reason : null,
          review_due_at: null,
          lease_expires_at: null,
        }),
        provider_status: providerStatus,
        provider_status_reason: change.reason,
        provider_status_at: change.occurredAt,
        updated_at: change.now,
      })
      .where('id', '=', templateId)
      .execute();
    const applied = async (eventId: string | undefined) =>
      change.onApplied?.(trx, {
        template: { id: templateId, project_id: row.project_id, name: row.name, language: row.language, status: to ?? row.status },
        reviewed: to,
        eventId,
        providerStatus,
        previousProviderStatus: row.provider_status,
        reason: change.reason,
        occurredAt: change.occurredAt,
      });
    if (to === undefined) {
      await applied(undefined);
      return 'applied';
    }
    const eventId = newId('tse', change.now);
    await trx
      .insertInto('template_status_events')
      .values({
        id: eventId,
        template_id: templateId,
        project_id: row.project_id,
        from_status: 'PENDING',
        to_status: to,
        reason: change.reason,
        occurred_at: change.occurredAt,
      })
      .execute();
    await applied(eventId);
    return 'applied';
  });
}

export interface CategoryChange {
  category: string;
  upcoming: { category: string; effectiveAt: number } | undefined;
  occurredAt: number;
  now: number;
}

export interface CategoryHistoryEntry {
  from: string;
  to: string;
  at: number;
}

export function categoryHistoryOf(row: Pick<TemplateRow, 'category_history'>): CategoryHistoryEntry[] {
  return row.category_history === null ? [] : (JSON.parse(row.category_history) as CategoryHistoryEntry[]);
}

/**
 * Records a category change the provider made (the template's category, with the change in its
 * history) or announced (upcoming_category). Repeats change nothing.
 */
export async function setTemplateCategory(
  db: Db,
  templateId: string,
  change: CategoryChange,
): Promise<'applied' | 'unchanged' | 'unknown'> {
  const dialect = dialectOf(db);
  return inTransaction(db, async (trx) => {
    const row = await trx
      .selectFrom('templates')
      .select(['category', 'category_history', 'upcoming_category'])
      .where('id', '=', templateId)
      .$if(dialect === 'postgres', (query) => query.forUpdate())
      .executeTakeFirst();
    if (row === undefined) return 'unknown';
    const upcoming = change.upcoming ? JSON.stringify(change.upcoming) : null;
    const moved = row.category !== change.category;
    // An announcement leaves the category as it is; a completed change clears any announcement.
    const nextUpcoming = change.upcoming ? upcoming : moved ? null : row.upcoming_category;
    if (!moved && nextUpcoming === row.upcoming_category) return 'unchanged';
    const history = moved
      ? JSON.stringify([...categoryHistoryOf(row), { from: row.category, to: change.category, at: change.occurredAt }])
      : row.category_history;
    await trx
      .updateTable('templates')
      .set({ category: change.category, category_history: history, upcoming_category: nextUpcoming, updated_at: change.now })
      .where('id', '=', templateId)
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
  options: { now: number; limit: number; leaseMs: number },
): Promise<TemplateRow[]> {
  return claimDue(db, 'templates', { ...options, dueColumn: 'review_due_at' });
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

/**
 * The templates a provider's report names: those with its template id, in projects whose
 * business account is the one reporting (or not known yet). Another account's report names none.
 */
export async function findTemplatesForProviderReport(
  db: Db,
  providerTemplateId: string,
  businessAccountId: string | undefined,
): Promise<Pick<TemplateRow, 'id' | 'project_id'>[]> {
  return db
    .selectFrom('templates')
    .leftJoin('provider_accounts', 'provider_accounts.project_id', 'templates.project_id')
    .select(['templates.id', 'templates.project_id'])
    .where('templates.provider_template_id', '=', providerTemplateId)
    .$if(businessAccountId !== undefined, (query) =>
      query.where((eb) =>
        eb.or([eb('provider_accounts.business_account_id', 'is', null), eb('provider_accounts.business_account_id', '=', businessAccountId!)]),
      ),
    )
    .execute();
}
