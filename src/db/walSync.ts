import { closeSync, fdatasync, openSync } from 'node:fs';

type Datasync = (fd: number, done: (error: Error | null) => void) => void;

interface Waiter {
  mark: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Puts an SQLite file's WAL on disk off the event loop: `fdatasync` of the `-wal` file on libuv's
 * thread pool, one at a time, each covering every write made before it started (the OS has them:
 * SQLite wrote the frames before its commit returned; a sync of the file covers every
 * descriptor's and every process's writes to it). Writers take a `mark()` after a commit and
 * wait for `synced(mark)`: a sync that started after the mark. Those that arrive while a sync runs
 * share the next one, so one sync serves many commits and the next is already gathering.
 *
 * This is synchronous = FULL's per-commit sync, taken off the thread that answers requests (see
 * openSqlite: the connections run NORMAL, which syncs the WAL's header and checkpoints itself).
 */
export class WalSync {
  readonly #walPath: string;
  readonly #datasync: Datasync;
  #fd: number | undefined;
  /** Marks handed out; a sync started when `#marked` was n covers marks ≤ n. */
  #marked = 0;
  #synced = 0;
  #running = false;
  #waiters: Waiter[] = [];
  #closed = false;

  constructor(databasePath: string, options: { datasync?: Datasync } = {}) {
    this.#walPath = `${databasePath}-wal`;
    this.#datasync = options.datasync ?? fdatasync;
  }

  /** A point after every write made so far (call it after the commit returned). */
  mark(): number {
    return ++this.#marked;
  }

  /** Undefined when `mark` is on disk already; else resolves once it is (rejects if the sync fails). */
  synced(mark: number): Promise<void> | undefined {
    if (mark <= this.#synced) return undefined;
    if (this.#closed) return Promise.reject(new Error('the SQLite file is closed'));
    return new Promise((resolve, reject) => {
      this.#waiters.push({ mark, resolve, reject });
      if (!this.#running) this.#start();
    });
  }

  /** Waits for the syncs asked for, then lets go of the file. */
  async close(): Promise<void> {
    if (this.#marked > this.#synced) await this.synced(this.#marked)?.catch(() => {});
    this.#closed = true;
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #start(): void {
    const covers = this.#marked;
    let fd: number;
    try {
      // Opened at the first sync: SQLite has made the file by then (a commit wrote to it). SQLite
      // never deletes or replaces it while a connection of this process is open.
      fd = this.#fd ??= openSync(this.#walPath, 'r');
    } catch (error) {
      this.#settle(covers, error);
      return;
    }
    this.#running = true;
    this.#datasync(fd, (error) => {
      this.#running = false;
      if (error === null) this.#synced = Math.max(this.#synced, covers);
      this.#settle(covers, error ?? undefined);
    });
  }

  #settle(covers: number, error: unknown): void {
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiting) {
      if (waiter.mark > covers) this.#waiters.push(waiter);
      else if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
    if (this.#waiters.length > 0 && !this.#closed) this.#start();
  }
}
