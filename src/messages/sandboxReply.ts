import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { MessageRow } from '../db/messages.ts';
import { findTemplate } from '../db/templates.ts';
import type { Reply } from '../domain/inboundMessages.ts';
import { quickReplyTap } from '../domain/quickReplyTap.ts';
import { DomainError, validationError } from '../errors.ts';
import type { Notifier } from '../workers/notifier.ts';
import { recordReplyOnMessage, type RecordedReply } from './recordReply.ts';

// The sandbox's simulated reply (POST /v1/test-helpers/messages/{id}/reply, CONTRACT §9): a tap on
// one of the message's quick-reply buttons, or a text written back to it, recorded as a provider's
// inbound reply would be.

export interface SandboxReplyRequest {
  /** The button's index in the template's BUTTONS component. */
  buttonIndex?: number;
  text?: string;
}

/** What the recipient's tap or text is, from the request and the message's template. */
async function replyOf(trx: Db, message: MessageRow, request: SandboxReplyRequest): Promise<Reply> {
  const given = [request.buttonIndex, request.text].filter((value) => value !== undefined).length;
  if (given !== 1) {
    throw validationError([
      { field: '/buttonIndex', code: 'one_of', message: 'Give either buttonIndex (a tap on a quick reply) or text (a written reply), not both, not neither.' },
    ]);
  }
  if (request.text !== undefined) return { type: 'text', text: request.text };
  const index = request.buttonIndex!;
  const template = await findTemplate(trx, message.project_id, message.template_id);
  // The message's rich parameters are the sending half's column (absent on the spec's messages).
  const sent = (message as MessageRow & { rich_parameters?: string | null }).rich_parameters;
  const tap = template === undefined ? undefined : quickReplyTap(template.components, sent, index);
  if (tap === undefined) {
    const problem = `/buttonIndex ${index} names no QUICK_REPLY button of template '${message.template_name}'.`;
    throw validationError([{ field: '/buttonIndex', code: 'not_a_quick_reply', message: problem }]);
  }
  return tap;
}

/**
 * Records the simulated reply on the message in the caller's transaction (409 for a CANCELED
 * message, which was never sent). The caller wakes the 'webhooks' channel after commit when
 * `enqueued`.
 */
export async function replyInSandbox(
  trx: Db,
  notifier: Notifier,
  message: MessageRow,
  request: SandboxReplyRequest,
  now: number,
): Promise<RecordedReply & { enqueued: boolean }> {
  const reply = await replyOf(trx, message, request);
  if (message.status === 'CANCELED') {
    throw new DomainError('invalid_status_transition', 'The message was canceled before it was sent; nobody can reply to it.');
  }
  const inbound = { providerMessageId: `wamid.sandbox.reply.${randomUUID()}`, reply, occurredAt: now };
  return recordReplyOnMessage(trx, notifier, message, inbound, now);
}
