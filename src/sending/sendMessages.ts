import type { Database } from '../db/database.ts';
import { type MessageRow, queuedMessageRow } from '../db/messages.ts';
import type { SendContext } from '../db/messages.ts';
import { linkedIdentities } from '../db/recipientLinks.ts';
import { suppressedAmong } from '../db/suppressions.ts';
import type { TemplatesTable } from '../db/tables.ts';
import { newId } from '../domain/ids.ts';
import { type ParameterRule, requestFingerprint } from '../domain/messageRequest.ts';
import { DomainError, validationError } from '../errors.ts';
import type { Notifier } from '../workers/notifier.ts';
import { type AcceptResult, MessageAcceptor } from './messageAcceptor.ts';
import { SendContexts, type TemplateParts, templateParts } from './sendContexts.ts';
import {
  checkVariables,
  chooseTemplate,
  itemProblems,
  providerNotConfigured,
  recipientSuppressed,
  renderContent,
  scheduledTime,
  type SendItem,
  sendParameters,
} from './sendRules.ts';

// The send use case, once: the single send and the batch send both come here (the template
// preview uses the same rules, sendRules.ts). A send checks its input, answers an idempotent
// replay, picks the template, checks variables, schedule and suppressions, renders, and has the
// message(s) accepted durably; the routes only translate HTTP to these calls and back.
//
// Nothing is read before the commit when this process remembers the project and template
// (SendContexts); whatever was remembered is checked again by the commit (MessageAcceptor), and
// a refusal based on a remembered context is checked against a fresh read before it leaves.

/** Sends of one request check again with fresh reads at most this often when something changes under them. */
const MAX_SEND_ATTEMPTS = 5;

export const MAX_BATCH_ITEMS = 1000;

export type SendResult = Exclude<AcceptResult, { kind: 'stale' }>;

interface Caller {
  projectId: string;
  keyId: string;
  /** The Idempotency-Key, already parsed. */
  idempotencyKey?: string;
  /** Runs just before the commit (a test seam). */
  beforeCommit?: () => Promise<void>;
}

export interface SingleSend extends Caller, SendItem {
  template: string;
  language: string;
  /** The accepted answer's bytes, stored with the idempotency record so a replay returns exactly them. */
  answer(message: MessageRow): string;
}

export interface BatchSend extends Caller {
  template: string;
  language: string;
  items: SendItem[];
  /** The accepted answer's bytes, stored with the idempotency record so a replay returns exactly them. */
  answer(outcome: BatchOutcome): string;
}

/** One batch item's fate: its message accepted, or the error that refused it. */
export type BatchItemOutcome = { index: number; message: MessageRow } | { index: number; error: DomainError };

export interface BatchOutcome {
  batchId: string;
  acceptedCount: number;
  rejectedCount: number;
  items: BatchItemOutcome[];
}

/** What a send checked about its project and template, ready to build messages. */
interface Checked {
  template: TemplatesTable;
  parts: TemplateParts;
  context: SendContext;
}

function changedMeanwhile(): DomainError {
  return new DomainError('unavailable', 'The template or the project changed while the message was being sent; retry.', {
    headers: { 'retry-after': '1' },
  });
}

export class Sending {
  readonly #database: Database;
  readonly #acceptor: MessageAcceptor;
  readonly #contexts: SendContexts;
  readonly #parameterRule: ParameterRule;

  /** `parameterRule`: what the provider refuses in a parameter value (none when it has no rule). */
  constructor(database: Database, notifier: Notifier, parameterRule: ParameterRule = () => undefined) {
    this.#database = database;
    this.#parameterRule = parameterRule;
    this.#acceptor = new MessageAcceptor(database, notifier);
    this.#contexts = new SendContexts(database.reader);
  }

  /** POST /v1/messages: one message, 202 (or the replay of an earlier answer). */
  async send(request: SingleSend): Promise<SendResult> {
    const { projectId, keyId, idempotencyKey } = request;
    const item: SendItem = {
      to: request.to,
      ...(request.variables && { variables: request.variables }),
      ...(request.headerVariables && { headerVariables: request.headerVariables }),
      ...(request.headerMedia && { headerMedia: request.headerMedia }),
      ...(request.headerLocation && { headerLocation: request.headerLocation }),
      ...(request.buttons && { buttons: request.buttons }),
      ...(request.sendAt !== undefined && { sendAt: request.sendAt }),
    };
    const problems = itemProblems(item, '', this.#parameterRule);
    if (problems.length > 0) throw validationError(problems);
    // The fingerprint of the body as sent (key order aside), as it always was.
    const fingerprint =
      idempotencyKey === undefined ? '' : requestFingerprint({ ...item, template: request.template, language: request.language });
    if (idempotencyKey !== undefined) {
      const replay = await this.#acceptor.replayFor(projectId, idempotencyKey, fingerprint);
      if (replay?.kind === 'replayed') return replay;
    }
    for (let attempt = 0; ; attempt++) {
      const checked = await this.#check(projectId, request.template, request.language, attempt > 0);
      if (checked === undefined) continue;
      const now = Date.now();
      let message: MessageRow;
      try {
        const suppressed = await this.#suppressed(projectId, checked, [item.to]);
        message = this.#message(projectId, checked, item, { now, at: '', suppressed });
      } catch (error) {
        // A refusal may rest on a remembered template: it leaves only once a fresh read agrees.
        if (attempt > 0) throw error;
        continue;
      }
      await request.beforeCommit?.();
      const result = await this.#acceptor.accept({
        keyId,
        projectId,
        messages: [message],
        template: checked.template,
        suppressionVersion: checked.context.suppressionVersion,
        responseBody: request.answer(message),
        ...(idempotencyKey !== undefined && { idempotency: { key: idempotencyKey, fingerprint } }),
      });
      if (result.kind !== 'stale') return result;
      if (attempt >= MAX_SEND_ATTEMPTS) throw changedMeanwhile();
    }
  }

  /**
   * POST /v1/messages/batch: up to 1,000 recipients of one template. The template and the project
   * are checked once (their refusal is the whole request's); each item then on its own, and the
   * accepted ones are committed together with the batch, all or none. 202 with each item's result.
   */
  async sendBatch(request: BatchSend): Promise<SendResult> {
    const { projectId, keyId, idempotencyKey, items } = request;
    const fingerprint =
      idempotencyKey === undefined
        ? ''
        : `batch:${requestFingerprint({ template: request.template, language: request.language, items })}`;
    if (idempotencyKey !== undefined) {
      const replay = await this.#acceptor.replayFor(projectId, idempotencyKey, fingerprint);
      if (replay?.kind === 'replayed') return replay;
    }
    for (let attempt = 0; ; attempt++) {
      const checked = await this.#check(projectId, request.template, request.language, attempt > 0);
      if (checked === undefined) continue;
      const now = Date.now();
      const batchId = newId('bat', now);
      const candidates = items.filter((item) => itemProblems(item, '', this.#parameterRule).length === 0).map((item) => item.to);
      const suppressed = await this.#suppressed(projectId, checked, candidates);
      const outcomes: BatchItemOutcome[] = [];
      const messages: MessageRow[] = [];
      for (const [index, item] of items.entries()) {
        const at = `/items/${index}`;
        try {
          const problems = itemProblems(item, at, this.#parameterRule);
          if (problems.length > 0) throw validationError(problems);
          const message = this.#message(projectId, checked, item, { now, at, suppressed, batchId });
          messages.push(message);
          outcomes.push({ index, message });
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          outcomes.push({ index, error });
        }
      }
      const body = request.answer({
        batchId,
        acceptedCount: messages.length,
        rejectedCount: items.length - messages.length,
        items: outcomes,
      });
      await request.beforeCommit?.();
      const result = await this.#acceptor.accept({
        keyId,
        projectId,
        messages,
        batch: {
          id: batchId,
          project_id: projectId,
          template_name: checked.template.name,
          language: checked.template.language,
          total: messages.length,
          created_at: now,
        },
        template: checked.template,
        suppressionVersion: checked.context.suppressionVersion,
        responseBody: body,
        ...(idempotencyKey !== undefined && { idempotency: { key: idempotencyKey, fingerprint } }),
      });
      if (result.kind !== 'stale') return result;
      if (attempt >= MAX_SEND_ATTEMPTS) throw changedMeanwhile();
    }
  }

  /**
   * The project and template a send names, as remembered (`fresh` false) or read now. A refusal
   * from a remembered context is undefined (read again); from a fresh one it is thrown.
   */
  async #check(projectId: string, name: string, language: string, fresh: boolean): Promise<Checked | undefined> {
    const context = await this.#contexts.get(projectId, name, fresh);
    try {
      if (!context) throw new DomainError('unauthorized', 'The API key is unknown or revoked.');
      // The template's own faults first (the spec's 422), then whether the project can send at all.
      const template = chooseTemplate(context.templates, name, language);
      if (!context.providerConfigured) throw providerNotConfigured();
      return { template, parts: templateParts(template), context };
    } catch (error) {
      if (fresh) throw error;
      return undefined;
    }
  }

  /**
   * The recipients among these the project suppresses, by any identity joined to theirs (a phone
   * and its BSUIDs, an old BSUID and its new one): no lookup at all for a project without any.
   */
  async #suppressed(projectId: string, checked: Checked, numbers: string[]): Promise<Set<string>> {
    if (checked.context.suppressionCount === 0) return new Set();
    const reader = this.#database.reader;
    const linked = await linkedIdentities(reader, projectId, numbers);
    const all = [...new Set([...numbers, ...[...linked.values()].flat()])];
    const suppressed = await suppressedAmong(reader, projectId, all, checked.template.category);
    return new Set(numbers.filter((number) => suppressed.has(number) || (linked.get(number) ?? []).some((other) => suppressed.has(other))));
  }

  /** One recipient's message, once its variables, schedule and number pass; else the refusal. */
  #message(
    projectId: string,
    { template, parts }: Checked,
    item: SendItem,
    how: { now: number; at: string; suppressed: Set<string>; batchId?: string },
  ): MessageRow {
    const { now, at, batchId } = how;
    checkVariables(template, parts, item, at);
    const sendAt = scheduledTime(item.sendAt, now, at);
    if (how.suppressed.has(item.to)) throw recipientSuppressed(item.to, at);
    const rich = sendParameters(parts, item);
    return queuedMessageRow(
      {
        projectId,
        to: item.to,
        template,
        variables: item.variables ?? {},
        ...(item.headerVariables && { headerVariables: item.headerVariables }),
        content: renderContent(parts, item),
        ...(rich !== undefined && { richParameters: JSON.stringify(rich) }),
        ...(sendAt !== undefined && { sendAt }),
        ...(batchId !== undefined && { batchId }),
      },
      now,
    );
  }
}
