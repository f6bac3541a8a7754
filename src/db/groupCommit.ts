import type { Database, Db } from './database.ts';
import { isDatabaseUnavailable } from './unavailable.ts';

interface Pending<Item, Outcome> {
  item: Item;
  resolve: (outcome: Outcome) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: writes submitted while a transaction is committing wait and are committed
 * together in the next one, so one fsync serves many requests. Under no load a write commits on
 * its own at once; under load batches grow by themselves, up to `maxBatch`.
 *
 * `durable: false` is for a worker's records that are redone if a crash of the machine loses
 * them: they are committed without a sync of their own (Database.withoutSync).
 */
export class GroupCommitter<Item, Outcome> {
  readonly #database: Database;
  readonly #commit: (trx: Db, items: Item[]) => Promise<Outcome[]>;
  readonly #maxBatch: number;
  readonly #durable: boolean;
  #queue: Pending<Item, Outcome>[] = [];
  #flushing = false;

  constructor(
    database: Database,
    commit: (trx: Db, items: Item[]) => Promise<Outcome[]>,
    options: { maxBatch?: number; durable?: boolean } = {},
  ) {
    this.#database = database;
    this.#commit = commit;
    this.#maxBatch = options.maxBatch ?? 200;
    this.#durable = options.durable ?? true;
  }

  submit(item: Item): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        // Let the requests already parsed in this turn of the event loop join the batch.
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      try {
        await this.#commitTogether(batch);
      } catch (error) {
        // Alone they would fail the same way (one connection timeout each, in turn): fail them all now.
        if (batch.length === 1 || isDatabaseUnavailable(error)) {
          for (const pending of batch) pending.reject(error);
          continue;
        }
        // One bad write (or a deadlock victim) must not fail its neighbours: commit each alone.
        for (const pending of batch) await this.#commitTogether([pending]).catch(pending.reject);
      }
    }
    this.#flushing = false;
  }

  async #commitTogether(batch: Pending<Item, Outcome>[]): Promise<void> {
    const items = batch.map((pending) => pending.item);
    const transaction = (db: Db) => db.transaction().execute((trx) => this.#commit(trx, items));
    const outcomes = this.#durable ? await transaction(this.#database.db) : await this.#database.withoutSync(transaction);
    batch.forEach((pending, index) => pending.resolve(outcomes[index]!));
  }
}
