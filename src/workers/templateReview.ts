import { findProject } from '../db/projects.ts';
import { findProviderAccount } from '../db/providerAccounts.ts';
import {
  claimDueTemplateReviews,
  clearTemplateReview,
  componentsOf,
  nextTemplateReviewDueAt,
  recordProviderTemplateId,
  rescheduleTemplateReview,
  setTemplateCategory,
  setTemplateStatus,
  type TemplateRow,
} from '../db/templates.ts';
import { providerCredentialsOf } from '../projectSecrets.ts';
import { reportedTime } from '../domain/reportedTime.ts';
import { TEMPLATE_CATEGORIES } from '../domain/templates.ts';
import type { Provider, ProviderReport, ReportResult } from '../providers/provider.ts';
import { enqueueTemplateEvent } from '../webhooks/templateEvents.ts';
import type { Job } from './loop.ts';
import type { ReportDeps } from './deps.ts';

const REVIEW_BATCH = 50;
/** Long enough for a provider round trip per template of a batch; a crashed worker's claims return after it. */
const REVIEW_LEASE_MS = 60_000;
/** When asking the provider fails (network, outage), ask again this much later. */
const RETRY_AFTER_ERROR_MS = 30_000;

type TemplateReport = Extract<ProviderReport, { kind: 'template' }>;
type CategoryReport = Extract<ProviderReport, { kind: 'template_category' }>;

/**
 * Applies a provider's report on a template: a PENDING one becomes APPROVED or REJECTED, with the
 * event, and leaves the review queue; the provider's own status (PAUSED, DISABLED…) and its reason
 * are recorded whatever svc's status is. Each change is delivered to the project's webhooks
 * (template.approved, template.rejected, template.paused…) from the same transaction. The one path for every review — the review worker,
 * provider webhooks and the sandbox test helper — so they cannot disagree. Duplicates and reports
 * older than the last one applied change nothing.
 */
export async function applyTemplateReview(deps: ReportDeps, report: TemplateReport): Promise<ReportResult> {
  const now = Date.now();
  const { providerStatus } = report;
  const defaultReason = report.status === 'REJECTED' ? 'Rejected by the provider.' : null;
  let enqueued = false;
  const result = await setTemplateStatus(deps.database.db, report.templateId, {
    to: report.status,
    providerStatus,
    reason: report.reason ?? defaultReason,
    occurredAt: reportedTime(report.occurredAt, { notBefore: 0, now }),
    now,
    onApplied: async (trx, applied) => {
      enqueued = await enqueueTemplateEvent(trx, deps.notifier, applied, now);
    },
  });
  if (enqueued) deps.notifier.wakeLocal('webhooks');
  const fields = { templateId: report.templateId, status: report.status, providerStatus };
  if (result === 'applied') deps.logger.info(fields, 'template status reported');
  else deps.logger.debug({ ...fields, result }, 'template status report ignored');
  return result;
}

/** Applies a category change the provider made or announced (Meta's template_category_update). */
export async function applyTemplateCategory(deps: ReportDeps, report: CategoryReport): Promise<ReportResult> {
  const known = (category: string) => (TEMPLATE_CATEGORIES as readonly string[]).includes(category);
  if (!known(report.category) || (report.upcoming && !known(report.upcoming.category))) return 'unchanged';
  const now = Date.now();
  const result = await setTemplateCategory(deps.database.db, report.templateId, {
    category: report.category,
    upcoming: report.upcoming,
    occurredAt: reportedTime(report.occurredAt, { notBefore: 0, now }),
    now,
  });
  if (result === 'applied') deps.logger.info({ templateId: report.templateId, category: report.category }, 'template category changed');
  return result;
}

export interface TemplateReviewDeps extends ReportDeps {
  provider: Provider;
  encryptionKey: Buffer;
}

/**
 * Asks the provider about PENDING templates whose review_due_at has passed. The due time lives in
 * the templates table, so a review outlives the process that registered the template.
 */
export function createTemplateReviewJob(deps: TemplateReviewDeps): Job {
  const { db } = deps.database;

  async function review(template: TemplateRow, now: number): Promise<void> {
    if (template.status !== 'PENDING') {
      await clearTemplateReview(db, template.id);
      return;
    }
    const project = await findProject(db, template.project_id);
    const account = await findProviderAccount(db, template.project_id);
    const check = await deps.provider.checkTemplate({
      templateId: template.id,
      projectId: template.project_id,
      name: template.name,
      language: template.language,
      category: template.category,
      components: componentsOf(template),
      ...(template.parameter_format === 'NAMED' && { parameterFormat: 'NAMED' as const }),
      credentials: project ? providerCredentialsOf(project, deps.encryptionKey) : undefined,
      businessAccountId: account?.business_account_id ?? null,
      providerTemplateId: template.provider_template_id,
    });
    if (check.providerTemplateId !== undefined) await recordProviderTemplateId(db, template.id, check.providerTemplateId);
    if (check.status === 'PENDING') {
      await rescheduleTemplateReview(db, template.id, now + check.checkAgainAfterMs);
      return;
    }
    await applyTemplateReview(deps, {
      kind: 'template',
      templateId: template.id,
      status: check.status,
      ...(check.providerStatus !== undefined && { providerStatus: check.providerStatus }),
      ...(check.status === 'REJECTED' && { reason: check.reason }),
      occurredAt: Date.now(),
    });
  }

  return {
    name: 'template-review',
    async runOnce(now) {
      const due = await claimDueTemplateReviews(db, { now, limit: REVIEW_BATCH, leaseMs: REVIEW_LEASE_MS });
      for (const template of due) {
        try {
          await review(template, now);
        } catch (error) {
          deps.logger.warn({ err: error, templateId: template.id }, 'template review check failed; will retry');
          await rescheduleTemplateReview(db, template.id, Date.now() + RETRY_AFTER_ERROR_MS);
        }
      }
      return { handled: due.length, nextDueAt: await nextTemplateReviewDueAt(db) };
    },
  };
}
