import type { Db } from '../db/database.ts';
import { findMessage, type MessageRow } from '../db/messages.ts';
import { findTemplate, type TemplateRow } from '../db/templates.ts';
import { DomainError, notFound } from '../errors.ts';
import type { RecordedReply } from '../messages/recordReply.ts';
import { replyInSandbox, type SandboxReplyRequest } from '../messages/sandboxReply.ts';
import type { ProviderInbound } from '../providers/provider.ts';
import { UNDELIVERABLE } from '../providers/sandbox/magicRecipients.ts';
import type { Notifier } from '../workers/notifier.ts';

// Test helpers (CONTRACT §7), like Stripe's test-mode helpers: they make the sandbox do now what
// it would do later. They act through the same provider inbound path as real provider reports.

export const DEFAULT_REJECTION = 'Rejected with the sandbox test helper.';

/** Runs work in a transaction that first re-checks the caller's key (authorizedWrite). */
type KeyCheckedWrite = <T>(work: (trx: Db) => Promise<T>) => Promise<T>;

interface HelperDeps {
  database: { db: Db };
  inbound: ProviderInbound;
}

function contradicts(template: TemplateRow, status: string): DomainError {
  return new DomainError('template_not_pending', `The template is already ${template.status}; it cannot be reviewed again as ${status}.`);
}

function cannotMove(from: string, to: string): DomainError {
  return new DomainError('invalid_status_transition', `The message is ${from}; it cannot move to ${to} (statuses never move backwards).`);
}

/** Settles a PENDING template's review now, as the provider would; idempotent for the status it has. */
export async function reviewTemplateNow(
  deps: HelperDeps,
  projectId: string,
  id: string,
  review: { status: 'APPROVED' | 'REJECTED'; reason?: string | undefined },
  write: KeyCheckedWrite,
): Promise<TemplateRow> {
  const { status, reason } = review;
  // The key is re-checked and the template's owner confirmed before the provider path settles it.
  const template = await write((trx) => findTemplate(trx, projectId, id));
  if (template === undefined) throw notFound('template');
  // Idempotent: asking again for the status it already has answers it as it is.
  if (template.status === status) return template;
  if (template.status !== 'PENDING') throw contradicts(template, status);
  const result = await deps.inbound({
    kind: 'template',
    templateId: template.id,
    status,
    ...(status === 'REJECTED' && { reason: reason ?? DEFAULT_REJECTION }),
    occurredAt: Date.now(),
  });
  const settled = await findTemplate(deps.database.db, projectId, template.id);
  if (result === 'unknown' || settled === undefined) throw notFound('template');
  // 'unchanged': the review worker settled it first, the same way or not.
  if (result === 'unchanged' && settled.status !== status) throw contradicts(settled, status);
  return settled;
}

/** Moves a message to a later status now, reported as the provider would; idempotent for the status it has. */
export async function advanceMessageNow(
  deps: HelperDeps,
  projectId: string,
  id: string,
  status: 'SENT' | 'DELIVERED' | 'READ' | 'FAILED',
  write: KeyCheckedWrite,
): Promise<MessageRow> {
  const message = await write((trx) => findMessage(trx, projectId, id));
  if (message === undefined) throw notFound('message');
  // Idempotent: asking again for the status it already has answers it as it is.
  if (message.status === status) return message;
  const result = await deps.inbound({
    kind: 'message',
    messageId: message.id,
    providerMessageId: message.provider_message_id ?? `wamid.sandbox.helper.${message.id}`,
    status,
    occurredAt: Date.now(),
    ...(status === 'FAILED' && { error: UNDELIVERABLE }),
  });
  const advanced = await findMessage(deps.database.db, projectId, message.id);
  if (advanced === undefined) throw notFound('message');
  // 'unchanged': a backwards move, or the message got there (or past it) meanwhile.
  if (result === 'unchanged' && advanced.status !== status) throw cannotMove(advanced.status, status);
  return advanced;
}

/** The recipient answers the project's message (in the caller's transaction). */
export async function replyToMessage(
  trx: Db,
  notifier: Notifier,
  projectId: string,
  id: string,
  request: SandboxReplyRequest,
  now: number,
): Promise<RecordedReply & { enqueued: boolean }> {
  const message = await findMessage(trx, projectId, id);
  if (message === undefined) throw notFound('message');
  return replyInSandbox(trx, notifier, message, request, now);
}
