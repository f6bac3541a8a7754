import { findProject } from '../db/projects.ts';
import {
  claimDueTemplateReviews,
  clearTemplateReview,
  componentsOf,
  nextTemplateReviewDueAt,
  rescheduleTemplateReview,
  setTemplateStatus,
  type TemplateRow,
} from '../db/templates.ts';
import { providerCredentialsOf } from '../projectSecrets.ts';
import type { Provider, ProviderReport, ReportResult } from '../providers/provider.ts';
import type { Job } from './loop.ts';
import type { ReportDeps } from './providerReports.ts';

const REVIEW_BATCH = 50;
/** Long enough for a provider round trip per template of a batch; a crashed worker's claims return after it. */
const REVIEW_LEASE_MS = 60_000;
/** When asking the provider fails (network, outage), ask again this much later. */
const RETRY_AFTER_ERROR_MS = 30_000;

type TemplateReport = Extract<ProviderReport, { kind: 'template' }>;

/**
 * Applies a provider's review of a template: PENDING → APPROVED or REJECTED, with the event, and
 * off the review queue. The one path for every review — the review worker, provider webhooks and
 * the sandbox test helper — so they cannot disagree. Duplicates change nothing.
 */
export async function applyTemplateReview(deps: ReportDeps, report: TemplateReport): Promise<ReportResult> {
  const result = await setTemplateStatus(deps.database.db, report.templateId, {
    to: report.status,
    reason: report.status === 'REJECTED' ? (report.reason ?? 'Rejected by the provider.') : null,
    occurredAt: report.occurredAt,
    now: Date.now(),
  });
  if (result === 'applied') {
    deps.logger.info({ templateId: report.templateId, status: report.status }, 'template reviewed');
  } else {
    deps.logger.debug({ templateId: report.templateId, status: report.status, result }, 'template review ignored');
  }
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
  const { db, dialect } = deps.database;

  async function review(template: TemplateRow, now: number): Promise<void> {
    if (template.status !== 'PENDING') {
      await clearTemplateReview(db, template.id);
      return;
    }
    const project = await findProject(db, template.project_id);
    const check = await deps.provider.checkTemplate({
      templateId: template.id,
      projectId: template.project_id,
      name: template.name,
      language: template.language,
      category: template.category,
      components: componentsOf(template),
      credentials: project ? providerCredentialsOf(project, deps.encryptionKey) : undefined,
      providerTemplateId: template.provider_template_id,
    });
    if (check.status === 'PENDING') {
      await rescheduleTemplateReview(db, template.id, now + check.checkAgainAfterMs);
      return;
    }
    await applyTemplateReview(deps, {
      kind: 'template',
      templateId: template.id,
      status: check.status,
      ...(check.status === 'REJECTED' && { reason: check.reason }),
      occurredAt: Date.now(),
    });
  }

  return {
    name: 'template-review',
    async runOnce(now) {
      const due = await claimDueTemplateReviews(db, dialect, { now, limit: REVIEW_BATCH, leaseMs: REVIEW_LEASE_MS });
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
