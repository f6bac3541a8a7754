import { findMessageForReport } from '../db/messages.ts';
import { transitionsForReport } from '../domain/messageStatus.ts';
import type { ProviderReport, ReportResult } from '../providers/provider.ts';
import type { ReportDeps } from './providerReports.ts';
import { recordStatusChanges } from './statusChanges.ts';

type MessageReport = Extract<ProviderReport, { kind: 'message' }>;

/**
 * Applies a provider's status report to its message through the state machine: forward only,
 * READ implies DELIVERED, FAILED only before READ; duplicates and late reports change nothing.
 */
export async function applyMessageReport(deps: ReportDeps, report: MessageReport): Promise<ReportResult> {
  const { db, dialect } = deps.database;
  const now = Date.now();
  const outcome = await db.transaction().execute(async (trx): Promise<ReportResult | 'webhooks'> => {
    const message = await findMessageForReport(trx, dialect, report);
    if (!message) return 'unknown';
    const transitions = transitionsForReport(message.status, report.status);
    if (transitions.length === 0) return 'unchanged';
    const enqueued = await recordStatusChanges(
      trx,
      dialect,
      deps.notifier,
      [
        {
          message,
          transitions,
          occurredAt: report.occurredAt,
          providerMessageId: report.providerMessageId,
          ...(report.error && { error: report.error }),
        },
      ],
      now,
    );
    return enqueued ? 'webhooks' : 'applied';
  });
  if (outcome === 'webhooks') {
    deps.notifier.wakeLocal('webhooks');
    return 'applied';
  }
  return outcome;
}
