import type { Db } from '../db/database.ts';
import type { MessageRow } from '../db/messages.ts';
import type { MessageStatus } from '../db/tables.ts';
import type { ProviderError } from '../providers/provider.ts';
import { addSuppressions } from '../db/suppressions.ts';

// With SVC_AUTO_SUPPRESS=true, messages that FAILED because the recipient cannot get WhatsApp
// messages put their number on the project's suppression list (source "provider"), in the
// transaction that records the failure. Off by default: CONTRACT §7's sandbox fails
// +15550000001 on every send, and a client that uses only the spec must never meet a 422
// recipient_suppressed it did not ask for.

/**
 * The provider's codes that say sending to this number again is pointless: 131026 "Message
 * undeliverable" (not a WhatsApp user, or has blocked the business; also the sandbox's
 * +15550000001). Not 131050 "User has stopped marketing messages": that user still gets their
 * one-time codes and order updates, and Meta's user_preferences webhook reports the opt-out itself
 * (a marketing-only suppression, suppressions/optOut.ts).
 */
export const OPTED_OUT_CODES: ReadonlySet<string> = new Set(['131026']);

/** A recorded status change, as much of it as suppression reads (workers/statusChanges.ts). */
interface EndedChange {
  message: Pick<MessageRow, 'id' | 'project_id' | 'recipient'>;
  transitions: readonly MessageStatus[];
  error?: Pick<ProviderError, 'code' | 'title'>;
}

/**
 * Adds the numbers of the changes that end FAILED with an opted-out code; in the caller's
 * transaction. Called only when the setting is on (statusChanges.ts StatusRecording).
 */
export async function suppressOptedOutRecipients(trx: Db, changes: readonly EndedChange[], now: number): Promise<void> {
  const entries = changes
    .filter((change) => change.transitions.at(-1) === 'FAILED' && change.error && OPTED_OUT_CODES.has(change.error.code))
    .map((change) => ({
      projectId: change.message.project_id,
      phoneNumber: change.message.recipient,
      reason: `The provider failed message ${change.message.id} with ${change.error!.code} (${change.error!.title}).`,
      source: 'provider' as const,
    }));
  if (entries.length > 0) await addSuppressions(trx, entries, now);
}
