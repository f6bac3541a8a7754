import type { Database, Db } from '../db/database.ts';
import { GroupCommitter } from '../db/groupCommit.ts';
import {
  claimsJoinGroupCommit,
  claimWebhookDeliveries,
  type DeliveryClaim,
  deleteWebhookCircuit,
  type RecordedAttempt,
  recordWebhookAttempts,
  saveWebhookCircuit,
  type WebhookCircuitRow,
  type WebhookDeliveryRow,
} from '../db/webhookDeliveries.ts';

// The webhook worker's writes, committed together with whatever else arrives meanwhile (group
// commit: one transaction and one fsync for many): each attempt with its delivery's next state,
// each receiver circuit that opens or closes, and, on SQLite, the next claim: it rides in the
// same transaction as the answers recorded before it, so a turn of the worker costs one fsync.

type Entry =
  | { kind: 'attempt'; recorded: RecordedAttempt }
  | { kind: 'circuit-open'; row: WebhookCircuitRow }
  | { kind: 'circuit-closed'; origin: string }
  | { kind: 'claim'; claim: DeliveryClaim };

export class WebhookRecorder {
  readonly #database: Database;
  readonly #committer: GroupCommitter<Entry, WebhookDeliveryRow[]>;

  constructor(database: Database) {
    this.#database = database;
    // Not synced one by one: an attempt record lost with the machine is an attempt made again (at least once).
    this.#committer = new GroupCommitter(database, (trx, items) => this.#commit(trx, items), { maxBatch: 500, durable: false });
  }

  async attempt(recorded: RecordedAttempt): Promise<void> {
    await this.#committer.submit({ kind: 'attempt', recorded });
  }

  async circuitOpened(row: WebhookCircuitRow): Promise<void> {
    await this.#committer.submit({ kind: 'circuit-open', row });
  }

  async circuitClosed(origin: string): Promise<void> {
    await this.#committer.submit({ kind: 'circuit-closed', origin });
  }

  /**
   * Claims deliveries (db/webhookDeliveries.ts claimWebhookDeliveries): in the next group commit,
   * or at once where a claim gains nothing by waiting for others' commits (claimsJoinGroupCommit).
   */
  claim(claim: DeliveryClaim): Promise<WebhookDeliveryRow[]> {
    const { db } = this.#database;
    if (!claimsJoinGroupCommit(db)) return claimWebhookDeliveries(db, claim);
    return this.#committer.submit({ kind: 'claim', claim });
  }

  async #commit(trx: Db, items: Entry[]): Promise<WebhookDeliveryRow[][]> {
    await recordWebhookAttempts(
      trx,
      items.flatMap((item) => (item.kind === 'attempt' ? [item.recorded] : [])),
    );
    const results: WebhookDeliveryRow[][] = [];
    // In the order they happened (a circuit may close and open again within one batch); claims
    // last, after the answers that may have freed a message's next event.
    for (const item of items) {
      if (item.kind === 'circuit-open') await saveWebhookCircuit(trx, item.row);
      else if (item.kind === 'circuit-closed') await deleteWebhookCircuit(trx, item.origin);
    }
    for (const [index, item] of items.entries()) {
      results[index] =
        item.kind === 'claim' ? await claimWebhookDeliveries(trx, item.claim) : [];
    }
    return results;
  }
}
