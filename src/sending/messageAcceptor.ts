import { notificationPayload, type Notifier } from '../workers/notifier.ts';
import { activeKeysForWrite } from '../db/apiKeys.ts';
import type { Database, Db } from '../db/database.ts';
import { GroupCommitter } from '../db/groupCommit.ts';
import { claimIdempotencyKeys, findIdempotencyRecord, type IdempotencyRecord } from '../db/idempotencyKeys.ts';
import { insertBatch } from '../db/batches.ts';
import { currentTemplates, insertAcceptedMessages, type MessageRow } from '../db/messages.ts';
import type { BatchesTable, TemplatesTable } from '../db/tables.ts';
import { DomainError, errorOf } from '../errors.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface AcceptRequest {
  keyId: string;
  projectId: string;
  /** The messages to accept together: one for a single send, a batch's accepted items (maybe none). */
  messages: MessageRow[];
  /** The batch the messages are accepted in, written with them. */
  batch?: BatchesTable;
  /**
   * The template the send was checked against, as it was read (perhaps from a cache): the commit
   * accepts the message only if the template is still exactly that.
   */
  template: TemplatesTable;
  /**
   * The project's suppression_version the recipients were checked against (perhaps remembered):
   * the commit accepts only if the project's list has not changed since.
   */
  suppressionVersion: number;
  /** The 202 body, stored with the idempotency record so a replay returns it byte for byte. */
  responseBody: string;
  idempotency?: { key: string; fingerprint: string };
}

export type AcceptResult =
  | { kind: 'accepted'; status: 202; body: string; replayed: false }
  | { kind: 'replayed'; status: number; body: string; replayed: true }
  /** The template, the project or its suppressions changed since the send was checked: check again, with fresh reads. */
  | { kind: 'stale' };

type CommitOutcome = 'accepted' | 'revoked' | 'key_taken' | 'stale';

const keyOf = (projectId: string, key: string) => `${projectId}\n${key}`;

// Columns a worker moves while a template is in use (review bookkeeping): not what a send relies on.
const BOOKKEEPING = new Set(['lease_expires_at', 'review_due_at']);

/** Whether the template is still the one the send was checked against: every column the same. */
function unchanged(checked: TemplatesTable, current: TemplatesTable | undefined): boolean {
  if (current === undefined) return false;
  const was = checked as unknown as Record<string, unknown>;
  for (const [column, value] of Object.entries(current)) {
    if (!BOOKKEEPING.has(column) && was[column] !== value) return false;
  }
  return true;
}

/**
 * Accepts messages durably: the message and its idempotency record are in the database before
 * the 202 leaves. Concurrent accepts share one transaction (group commit), which is also where
 * everything the request path read from a cache is checked against the database: the key is
 * still active (revocation applies to requests in flight), its project still enabled and able
 * to send, its suppression list unchanged, the template still what the send was checked against.
 * A batch is one request here: its messages and its row commit together or not at all.
 */
export class MessageAcceptor {
  readonly #database: Database;
  readonly #notifier: Notifier;
  readonly #committer: GroupCommitter<AcceptRequest, CommitOutcome>;
  /** Idempotency keys whose first request is being committed by this process. */
  readonly #inFlight = new Set<string>();

  constructor(database: Database, notifier: Notifier) {
    this.#database = database;
    this.#notifier = notifier;
    this.#committer = new GroupCommitter(database, (trx, items) => this.#commitBatch(trx, items));
  }

  /** A stored answer for this idempotency key, or undefined when the key is new. */
  async replayFor(projectId: string, key: string, fingerprint: string): Promise<AcceptResult | undefined> {
    if (this.#inFlight.has(keyOf(projectId, key))) {
      throw new DomainError(
        'idempotency_request_in_progress',
        'A request with this Idempotency-Key is still being processed; retry shortly.',
      );
    }
    const record = await findIdempotencyRecord(this.#database.reader, projectId, key, Date.now());
    return record && replayOf(record, fingerprint);
  }

  async accept(request: AcceptRequest): Promise<AcceptResult> {
    const idempotencyKey = request.idempotency && keyOf(request.projectId, request.idempotency.key);
    if (idempotencyKey !== undefined) {
      if (this.#inFlight.has(idempotencyKey)) {
        throw new DomainError(
          'idempotency_request_in_progress',
          'A request with this Idempotency-Key is still being processed; retry shortly.',
        );
      }
      this.#inFlight.add(idempotencyKey);
    }
    try {
      const outcome = await this.#committer.submit(request);
      if (outcome === 'revoked') throw errorOf('api_key_revoked');
      if (outcome === 'stale') return { kind: 'stale' };
      if (outcome === 'key_taken') {
        // Another process committed this key first: answer as its replay (or as a reuse).
        const record = await findIdempotencyRecord(
          this.#database.reader,
          request.projectId,
          request.idempotency!.key,
          Date.now(),
        );
        if (!record) throw new DomainError('idempotency_request_in_progress');
        return replayOf(record, request.idempotency!.fingerprint);
      }
      this.#notifier.wakeLocal('messages', [request.projectId]);
      return { kind: 'accepted', status: 202, body: request.responseBody, replayed: false };
    } finally {
      if (idempotencyKey !== undefined) this.#inFlight.delete(idempotencyKey);
    }
  }

  async #commitBatch(trx: Db, items: AcceptRequest[]): Promise<CommitOutcome[]> {
    const now = Date.now();
    // Revocation applies to requests in flight: a key revoked before this commit writes nothing.
    const keys = await activeKeysForWrite(trx, [...new Set(items.map((item) => item.keyId))]);
    const templates = await currentTemplates(trx, [
      ...new Set(items.filter((item) => keys.has(item.keyId)).map((item) => item.template.id)),
    ]);
    // Sends checked against the same remembered template share its row: compared once.
    const compared = new Map<TemplatesTable, boolean>();
    const stillTheSame = (template: TemplatesTable) => {
      let same = compared.get(template);
      if (same === undefined) {
        same = unchanged(template, templates.get(template.id));
        compared.set(template, same);
      }
      return same;
    };
    const outcomes = items.map((item): CommitOutcome => {
      const key = keys.get(item.keyId);
      if (key === undefined || key.projectId !== item.projectId) return 'revoked';
      if (!key.providerConfigured || key.suppressionVersion !== item.suppressionVersion || !stillTheSame(item.template)) {
        return 'stale';
      }
      return 'accepted';
    });
    const records: IdempotencyRecord[] = [];
    items.forEach((item, index) => {
      if (outcomes[index] !== 'accepted' || !item.idempotency) return;
      records.push({
        project_id: item.projectId,
        key: item.idempotency.key,
        request_hash: item.idempotency.fingerprint,
        // The record names what the request made: its message, or its batch.
        message_id: item.batch?.id ?? item.messages[0]!.id,
        response_status: 202,
        response_body: item.responseBody,
        created_at: now,
        expires_at: now + IDEMPOTENCY_WINDOW_MS,
      });
    });
    const claimed = await claimIdempotencyKeys(trx, records, now);
    items.forEach((item, index) => {
      if (outcomes[index] === 'accepted' && item.idempotency && !claimed.has(keyOf(item.projectId, item.idempotency.key))) {
        outcomes[index] = 'key_taken';
      }
    });
    const accepted = items.filter((_, index) => outcomes[index] === 'accepted');
    // The message row is the whole record of its acceptance: its QUEUED event is derived from it.
    for (const item of accepted) if (item.batch) await insertBatch(trx, item.batch);
    const messages = accepted.flatMap((item) => item.messages);
    await insertAcceptedMessages(trx, messages, await this.#notifier.databaseChannel('messages'), notificationPayload(accepted.map((item) => item.projectId)));
    return outcomes;
  }
}

function replayOf(record: IdempotencyRecord, fingerprint: string): AcceptResult {
  if (record.request_hash !== fingerprint) {
    throw new DomainError(
      'idempotency_key_reused',
      'This Idempotency-Key was used with a different request body in the last 24 hours; use a new key.',
    );
  }
  return { kind: 'replayed', status: record.response_status, body: record.response_body, replayed: true };
}
