import type { Db } from '../db/database.ts';
import type { MessageRow } from '../db/messages.ts';
import type { MessageStatus } from '../db/tables.ts';
import type { ErrorClass, ErrorClassOf, ProviderError } from '../providers/provider.ts';
import { addSuppressions } from '../db/suppressions.ts';

// With SVC_AUTO_SUPPRESS=true, messages that FAILED because the recipient cannot get WhatsApp
// messages put their number on the project's suppression list (source "provider"), in the
// transaction that records the failure. Off by default: CONTRACT §7's sandbox fails
// +15550000001 on every send, and a client that uses only the spec must never meet a 422
// recipient_suppressed it did not ask for.

/** A recorded status change, as much of it as suppression reads (workers/statusChanges.ts). */
interface EndedChange {
  message: Pick<MessageRow, 'id' | 'project_id' | 'recipient'>;
  transitions: readonly MessageStatus[];
  error?: Pick<ProviderError, 'code' | 'title'>;
}

/** The changes that end FAILED with an error of this class (the provider's classification). */
function endedWith(changes: readonly EndedChange[], errorClassOf: ErrorClassOf, errorClass: ErrorClass): EndedChange[] {
  return changes.filter((change) => change.transitions.at(-1) === 'FAILED' && change.error && errorClassOf(change.error.code) === errorClass);
}

/**
 * Suppresses for MARKETING the recipients of the changes that end FAILED because the user stopped
 * marketing messages (WhatsApp's 131050), as the provider's opt-out report does (CONTRACT §9),
 * whatever SVC_AUTO_SUPPRESS says; a "resume" lifts it. In the caller's transaction.
 */
export async function suppressMarketingStopped(trx: Db, changes: readonly EndedChange[], errorClassOf: ErrorClassOf, now: number): Promise<void> {
  const stopped = endedWith(changes, errorClassOf, 'marketing_stopped')
    .map((change) => ({
      projectId: change.message.project_id,
      phoneNumber: change.message.recipient,
      reason: `The provider failed message ${change.message.id} with ${change.error!.code}: the user stopped marketing messages.`,
      source: 'marketing_opt_out' as const,
      scope: 'marketing' as const,
    }));
  if (stopped.length > 0) await addSuppressions(trx, stopped, now);
}

/**
 * Adds the numbers of the changes that end FAILED because the recipient cannot get messages
 * (WhatsApp's 131026); in the caller's transaction. Called only when the setting is on
 * (statusChanges.ts StatusRecording).
 */
export async function suppressOptedOutRecipients(trx: Db, changes: readonly EndedChange[], errorClassOf: ErrorClassOf, now: number): Promise<void> {
  const entries = endedWith(changes, errorClassOf, 'recipient_unreachable')
    .map((change) => ({
      projectId: change.message.project_id,
      phoneNumber: change.message.recipient,
      reason: `The provider failed message ${change.message.id} with ${change.error!.code} (${change.error!.title}).`,
      source: 'provider' as const,
    }));
  if (entries.length > 0) await addSuppressions(trx, entries, now);
}
