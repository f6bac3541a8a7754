import type { MessageStatus } from '../db/tables.ts';

// The message state machine (spec §3, CONTRACT §1): QUEUED → SENT → DELIVERED → READ, and
// FAILED from any state before READ. Statuses never move backwards; a report that skips states
// (READ without DELIVERED) implies them, so every message walks the whole chain. CANCELED is
// beyond the spec: only a cancel makes it (CONTRACT §3), only from QUEUED, and nothing follows it.

const CHAIN: MessageStatus[] = ['QUEUED', 'SENT', 'DELIVERED', 'READ'];

export type ReportedStatus = Exclude<MessageStatus, 'QUEUED'>;

export function isFinal(status: MessageStatus): boolean {
  return status === 'READ' || status === 'FAILED' || status === 'CANCELED';
}

/**
 * The statuses to record, in order, when the provider reports `reported` for a message that is
 * `current`: empty for a duplicate, late or backwards report.
 */
export function transitionsFor(current: MessageStatus, reported: ReportedStatus): MessageStatus[] {
  if (isFinal(current)) return [];
  if (reported === 'CANCELED') return current === 'QUEUED' ? ['CANCELED'] : [];
  if (reported === 'FAILED') return ['FAILED'];
  const from = CHAIN.indexOf(current);
  const to = CHAIN.indexOf(reported);
  return to > from ? CHAIN.slice(from + 1, to + 1) : [];
}

/**
 * The statuses to record for a provider's report. The provider reports only on messages it has
 * taken, so a message still QUEUED here (its report overtook our own record of the submission)
 * was SENT first: it walks QUEUED → SENT → FAILED like any other.
 */
export function transitionsForReport(current: MessageStatus, reported: ReportedStatus): MessageStatus[] {
  if (current === 'QUEUED' && reported === 'FAILED') return ['SENT', 'FAILED'];
  return transitionsFor(current, reported);
}

/** The webhook event type of a status change. */
export function eventTypeOf(status: ReportedStatus): string {
  return `message.${status.toLowerCase()}`;
}
