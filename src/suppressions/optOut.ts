import type { Db } from '../db/database.ts';
import { findOptOutSettings } from '../db/optOutSettings.ts';
import { addSuppressions, deleteSuppressionOf, widenSuppression } from '../db/suppressions.ts';
import type { MarketingPreference, Reply } from '../domain/inboundMessages.ts';
import { DEFAULT_OPT_OUT_KEYWORDS, matchingKeyword } from '../domain/optOutKeywords.ts';

// Opt-outs from what recipients send (CONTRACT §9): a keyword suppresses every send to its sender
// (`opt_out_keyword`, scope `all`); Meta's marketing opt-out suppresses MARKETING templates only
// (`marketing_opt_out`, scope `marketing`) until the recipient resumes them. Every entry point —
// Meta's webhook, the sandbox's reply helper — calls these, in the transaction that records the
// inbound message.

/** The keyword a reply is (its text, or a button's payload), if any. */
function keywordOf(keywords: readonly string[], reply: Reply): string | undefined {
  return matchingKeyword(keywords, reply.text) ?? matchingKeyword(keywords, reply.payload);
}

/**
 * Suppresses the sender for every project (of those that own the number it wrote to) whose
 * enabled keywords the reply matches; returns those projects. A number already suppressed stays
 * as it is, except a marketing-only suppression, which now covers every send.
 */
export async function optOutByKeyword(
  trx: Db,
  projectIds: readonly string[],
  from: string,
  reply: Reply,
  now: number,
): Promise<string[]> {
  const settings = await findOptOutSettings(trx, projectIds);
  const optedOut: string[] = [];
  for (const projectId of [...projectIds].sort()) {
    const project = settings.get(projectId);
    if (project === undefined || !project.enabled) continue;
    const keyword = keywordOf(project.keywords ?? DEFAULT_OPT_OUT_KEYWORDS, reply);
    if (keyword === undefined) continue;
    const entry = {
      projectId,
      phoneNumber: from,
      reason: `The recipient sent the opt-out keyword "${keyword}".`,
      source: 'opt_out_keyword' as const,
      scope: 'all' as const,
    };
    const added = (await addSuppressions(trx, [entry], now)).length > 0;
    if (added || (await widenSuppression(trx, entry))) optedOut.push(projectId);
  }
  return optedOut;
}

/**
 * Meta's marketing opt-out: "stop" suppresses MARKETING sends to the number for each of these
 * projects (a number already suppressed keeps its wider suppression); "resume" lifts only that
 * marketing opt-out, never a suppression added by hand or by keyword.
 */
export async function applyMarketingPreference(
  trx: Db,
  projectIds: readonly string[],
  preference: Pick<MarketingPreference, 'from' | 'value'>,
  now: number,
): Promise<void> {
  const kind = { source: 'marketing_opt_out' as const, scope: 'marketing' as const };
  for (const projectId of [...projectIds].sort()) {
    if (preference.value === 'stop') {
      const reason = 'The recipient stopped marketing messages on WhatsApp.';
      await addSuppressions(trx, [{ projectId, phoneNumber: preference.from, reason, ...kind }], now);
    } else {
      await deleteSuppressionOf(trx, projectId, preference.from, kind);
    }
  }
}
