import { findMessageForReport } from '../db/messages.ts';
import type { Db } from '../db/database.ts';
import type { MessageRow } from '../db/messages.ts';
import { findProject, projectsSendingFrom } from '../db/projects.ts';
import { transitionsForReport } from '../domain/messageStatus.ts';
import { reportedTime } from '../domain/reportedTime.ts';
import type { ProviderReport, ReportResult } from '../providers/provider.ts';
import type { ReportDeps } from './providerReports.ts';
import { recordStatusChanges } from './statusChanges.ts';

type MessageReport = Extract<ProviderReport, { kind: 'message' }>;

/**
 * Whether a report from `phoneNumberId` is about this message: the number is its project's, or
 * (a message sent before the project changed numbers) the provider's id is the one recorded and
 * no project here sends from that number any more. Another project's number never is.
 */
async function fromSendingNumber(trx: Db, message: MessageRow, report: MessageReport & { phoneNumberId: string }): Promise<boolean> {
  const project = await findProject(trx, message.project_id);
  if (project?.provider_phone_number_id === report.phoneNumberId) return true;
  if (message.provider_message_id !== report.providerMessageId) return false;
  return !(await projectsSendingFrom(trx, [report.phoneNumberId])).has(report.phoneNumberId);
}

/**
 * Applies a provider's status report to its message through the state machine: forward only,
 * READ implies DELIVERED, FAILED only before READ; duplicates and late reports change nothing.
 * A report naming its sending number applies only when that number sent the message; its time is
 * kept between the message's queueing and now.
 */
export async function applyMessageReport(deps: ReportDeps, report: MessageReport): Promise<ReportResult> {
  const { db, dialect } = deps.database;
  const now = Date.now();
  const outcome = await db.transaction().execute(async (trx): Promise<ReportResult | 'webhooks'> => {
    const message = await findMessageForReport(trx, dialect, report);
    if (!message) return 'unknown';
    if (report.phoneNumberId !== undefined && !(await fromSendingNumber(trx, message, { ...report, phoneNumberId: report.phoneNumberId }))) {
      deps.logger.warn({ messageId: message.id, phoneNumberId: report.phoneNumberId }, 'status from another number ignored');
      return 'unchanged';
    }
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
          occurredAt: reportedTime(report.occurredAt, { notBefore: message.queued_at, now }),
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
