import { chargeUpdate } from '../costs/charges.ts';
import type { Db } from '../db/database.ts';
import { addCosts, type CostDelta } from '../db/messageCosts.ts';
import { GroupCommitter } from '../db/groupCommit.ts';
import type { MessageRow } from '../db/messages.ts';
import { findProject, projectsSendingFrom } from '../db/projects.ts';
import { linkIdentities } from '../db/recipientLinks.ts';
import { lockReportedMessages } from '../db/reportedMessages.ts';
import { pricingAccountOfProjectAt } from '../db/volumeTiers.ts';
import { isBusinessScopedUserId } from '../domain/messageRequest.ts';
import { transitionsForReport } from '../domain/messageStatus.ts';
import { reportedTime } from '../domain/reportedTime.ts';
import type { ProviderReport, RecipientIdentities, ReportResult } from '../providers/provider.ts';
import type { ReportDeps } from './deps.ts';
import { DEFAULT_DROP_BURST, DropBurstWatch } from './heldMessages.ts';
import { type MessageUpdate, recordStatusChanges, type StatusChange } from './statusChanges.ts';

type MessageReport = Extract<ProviderReport, { kind: 'message' }>;
type Applied = ReportResult | 'webhooks';

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
 * What a status teaches about the message's recipient: the BSUID of a message sent to a phone
 * number, the phone of one sent to a BSUID (columns set once learned or changed), and the pairs of
 * identities to join. Phone numbers are joined only to BSUIDs, never to another number.
 */
function learnedIdentity(
  message: MessageRow,
  named: RecipientIdentities | undefined,
): { columns: { recipient_user_id?: string; recipient_phone?: string }; links: [string, string][] } {
  const columns: { recipient_user_id?: string; recipient_phone?: string } = {};
  const links: [string, string][] = [];
  if (named === undefined) return { columns, links };
  if (isBusinessScopedUserId(message.recipient)) {
    if (named.phone !== undefined && named.phone !== message.recipient_phone) {
      columns.recipient_phone = named.phone;
      links.push([message.recipient, named.phone]);
    }
    // A parent BSUID sent to, the portfolio's own BSUID reported (or the other way round): one user.
    if (named.userId !== undefined && named.userId !== message.recipient && named.userId !== message.recipient_user_id) {
      columns.recipient_user_id = named.userId;
      links.push([message.recipient, named.userId]);
    }
  } else if (named.userId !== undefined && named.userId !== message.recipient_user_id) {
    columns.recipient_user_id = named.userId;
    links.push([message.recipient, named.userId]);
  }
  return { columns, links };
}

/**
 * Applies provider status reports to their messages through the state machine: forward only,
 * READ implies DELIVERED, FAILED only before READ; duplicates and late reports change nothing.
 * A report naming its sending number applies only when that number sent the message; its time is
 * kept between the message's queueing and now.
 *
 * Reports arriving together (the sandbox's due reports, a provider's concurrent webhooks) are
 * group-committed: one transaction and a fixed number of statements for all of them, as the
 * dispatcher records its outcomes. Each report still gets its own answer.
 */
export function createMessageReports(deps: ReportDeps): (report: MessageReport) => Promise<ReportResult> {
  const committer = new GroupCommitter<MessageReport, Applied>(deps.database, (trx, reports) => applyReports(deps, trx, reports));
  const drops = deps.dropBurstWatch ?? new DropBurstWatch(deps.logger, DEFAULT_DROP_BURST, Date.now, deps.counters);
  return async (report) => {
    const applied = await committer.submit(report);
    // Counted once committed: a drop of a held message that moved it (a repeat changes nothing).
    const error = report.status === 'FAILED' ? report.error : undefined;
    if (applied !== 'unchanged' && applied !== 'unknown' && error && deps.errorClassOf?.(error.code) === 'held_dropped') {
      drops.record(report.phoneNumberId ?? 'unknown', error.code);
    }
    if (applied !== 'webhooks') return applied;
    deps.notifier.wakeLocal('webhooks');
    return 'applied';
  };
}

async function applyReports(deps: ReportDeps, trx: Db, reports: MessageReport[]): Promise<Applied[]> {
  const now = Date.now();
  const results: Applied[] = reports.map(() => 'unknown');
  let pending = reports.map((report, index) => ({ report, index }));
  // One report per message in each pass, so two reports about one message apply in their order,
  // the second to the row the first left.
  while (pending.length > 0) {
    const { byId, byProviderId } = await lockReportedMessages(trx, pending.map(({ report }) => report));
    const changes: StatusChange[] = [];
    const updates: MessageUpdate[] = [];
    const links: { projectId: string; a: string; b: string }[] = [];
    const costs: CostDelta[] = [];
    const changed: number[] = [];
    const inThisPass = new Set<string>();
    const later: typeof pending = [];
    for (const entry of pending) {
      const { report, index } = entry;
      const message = report.messageId === undefined ? byProviderId.get(report.providerMessageId) : byId.get(report.messageId);
      if (!message) continue;
      if (inThisPass.has(message.id)) {
        later.push(entry);
        continue;
      }
      inThisPass.add(message.id);
      if (report.phoneNumberId !== undefined && !(await fromSendingNumber(trx, message, { ...report, phoneNumberId: report.phoneNumberId }))) {
        deps.logger.warn({ messageId: message.id, phoneNumberId: report.phoneNumberId }, 'status from another number ignored');
        results[index] = 'unchanged';
        continue;
      }
      const held = (message.held_at ?? null) !== null && message.status === 'QUEUED';
      // A held message the provider drops was never sent: QUEUED → FAILED, without SENT.
      const transitions = held && report.status === 'FAILED' ? ['FAILED' as const] : transitionsForReport(message.status, report.status);
      // Meta's price of the message comes with its sent, delivered and read statuses, late or not.
      const pricing = report.pricing && JSON.stringify(report.pricing);
      const learned = learnedIdentity(message, report.recipient);
      links.push(...learned.links.map(([a, b]) => ({ projectId: message.project_id, a, b })));
      const newColumns = { ...(pricing !== undefined && pricing !== message.pricing && { pricing }), ...learned.columns };
      const newPricing = Object.keys(newColumns).length > 0 ? newColumns : undefined;
      const occurredAt = reportedTime(report.occurredAt, { notBefore: message.queued_at, now });
      // What its delivery costs, once it is both delivered and priced (costs/charges.ts). The
      // delivery time as recordStatusChanges will record it: never before an earlier status.
      const deliveredAt =
        message.delivered_at ??
        (transitions.includes('DELIVERED')
          ? Math.max(occurredAt, message.queued_at, message.sent_at ?? 0, message.read_at ?? 0)
          : null);
      const afterPricing = pricing ?? message.pricing ?? null;
      // Priced now (newly delivered or newly priced): at its WABA's volume tier in force then, if Meta named one.
      const pricedNow = afterPricing !== null && deliveredAt !== null && (afterPricing !== (message.pricing ?? null) || message.delivered_at === null);
      const account = deps.costs && pricedNow ? await pricingAccountOfProjectAt(trx, message.project_id, deliveredAt) : undefined;
      const charge = deps.costs && chargeUpdate(deps.costs, message, { pricing: afterPricing, deliveredAt, ...account });
      if (charge) costs.push(...charge.deltas);
      const newCost = charge?.cost !== undefined ? { cost: charge.cost } : undefined;
      if (transitions.length === 0) {
        if (newPricing) {
          updates.push({ id: message.id, changes: { ...newPricing, ...newCost, updated_at: now } });
          results[index] = 'applied';
        } else {
          results[index] = 'unchanged';
        }
        continue;
      }
      if (held) deps.counters?.held.inc({ event: transitions.at(-1) === 'FAILED' ? 'dropped' : 'released' });
      changes.push({
        message,
        transitions,
        occurredAt,
        providerMessageId: report.providerMessageId,
        ...(report.error && { error: report.error }),
        ...((newPricing || newCost) && { alsoSet: { ...newPricing, ...newCost } }),
      });
      changed.push(index);
    }
    const enqueued = await recordStatusChanges(trx, { notifier: deps.notifier, autoSuppress: deps.autoSuppress, errorClassOf: deps.errorClassOf, counters: deps.counters }, changes, now, updates);
    // In one order across transactions (see linkIdentities).
    links.sort((x, y) => (x.projectId + x.a + x.b < y.projectId + y.a + y.b ? -1 : 1));
    for (const { projectId, a, b } of links.splice(0)) await linkIdentities(trx, projectId, a, b, 'status', now);
    await addCosts(trx, costs);
    for (const index of changed) results[index] = enqueued ? 'webhooks' : 'applied';
    pending = later;
  }
  return results;
}
