import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** The thread: its own connection, which copies the WAL into the file and syncs both (synchronous = FULL). */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path, { timeout: 5000 });
db.exec('PRAGMA synchronous = FULL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
parentPort.on('message', (message) => {
  if (message === 'close') { db.close(); parentPort.close(); return; }
  try {
    const { busy, log, checkpointed } = checkpoint.get();
    parentPort.postMessage({ id: message, log, checkpointed, busy });
  } catch (error) {
    parentPort.postMessage({ id: message, error: String(error && error.message || error) });
  }
});
`;

interface Result {
  /** Frames in the WAL, and how many of them are in the database file now. */
  log: number;
  checkpointed: number;
}

/** After a write, how soon the WAL is copied into the database file (by the thread). */
const CHECKPOINT_AFTER_MS = 500;
/**
 * A WAL this long (frames, ≈ 4 KiB each; SQLite's own auto-checkpoint size) is copied once more
 * while the writer is held, so that it ends fully copied and the next commit starts it over.
 */
const RESTART_AT_FRAMES = 1000;
/** A WAL frame: a 4 KiB page (SQLite's default) and its header. */
const PAGE_BYTES = 4096 + 24;

/**
 * Checkpoints an SQLite file in a worker thread, so that copying the WAL into the database file
 * and its syncs never hold the event loop (the writer's own auto-checkpoint is off: openSqlite).
 * A passive checkpoint runs beside the writer; under constant writes it never quite catches up,
 * and SQLite starts the WAL over only once it has — so when the WAL has grown long, the tail is
 * copied once more with the writer held (`holdWriter`: writes wait, the event loop does not).
 * SQLite updates what it counts as copied only after syncing the database file, and starts the
 * WAL over only then: a WAL is never reused before its frames are on disk in the file.
 */
export class SqliteCheckpointer {
  readonly #path: string;
  readonly #holdWriter: <T>(work: () => Promise<T>) => Promise<T>;
  #worker: Worker | undefined;
  readonly #pending = new Map<number, { resolve: (result: Result) => void; reject: (error: Error) => void }>();
  #ids = 0;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(path: string, holdWriter: <T>(work: () => Promise<T>) => Promise<T>) {
    this.#path = path;
    this.#holdWriter = holdWriter;
  }

  /** A commit was made: a checkpoint follows soon. */
  written(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setTimeout(() => {
      // No thread for a short WAL (a test's, a quiet service's): SQLite's own auto-checkpoint
      // waits for as many pages, and the last connection to close checkpoints what is left.
      if (this.#worker === undefined && this.#walBytes() < RESTART_AT_FRAMES * PAGE_BYTES) {
        this.#timer = undefined;
        return;
      }
      this.#running = this.#cycle().finally(() => {
        this.#running = undefined;
        this.#timer = undefined;
      });
    }, CHECKPOINT_AFTER_MS).unref();
  }

  /** One pass now (and the held one if the WAL is long); for tests and for close. */
  async checkpoint(): Promise<Result> {
    const passive = await this.#checkpoint();
    if (passive.log < RESTART_AT_FRAMES || passive.checkpointed === passive.log) return passive;
    return this.#holdWriter(() => this.#checkpoint());
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#running;
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker === undefined) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.postMessage('close');
    await exited;
  }

  #walBytes(): number {
    try {
      return statSync(`${this.#path}-wal`).size;
    } catch {
      return 0;
    }
  }

  async #cycle(): Promise<void> {
    // A failed checkpoint loses nothing (the WAL keeps the frames); the next write schedules another.
    await this.checkpoint().catch(() => {});
  }

  #checkpoint(): Promise<Result> {
    if (this.#closed && this.#running === undefined) return Promise.reject(new Error('the checkpointer is closed'));
    const worker = (this.#worker ??= this.#start());
    const id = ++this.#ids;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage(id);
    });
  }

  #start(): Worker {
    const worker = new Worker(THREAD, { eval: true, workerData: { path: this.#path } });
    worker.unref();
    worker.on('message', (reply: Result & { id: number; error?: string }) => {
      const pending = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      if (reply.error !== undefined) pending?.reject(new Error(reply.error));
      else pending?.resolve({ log: reply.log, checkpointed: reply.checkpointed });
    });
    worker.on('error', (error) => this.#failAll(error));
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(new Error('the checkpoint thread stopped'));
    });
    return worker;
  }

  #failAll(error: Error): void {
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }
}
