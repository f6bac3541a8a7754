import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/**
 * The thread: its own connection, which copies the WAL into the database file (synchronous =
 * FULL: the WAL is synced before the copy, the file after it, and SQLite counts frames as copied
 * only then). It reads how long the WAL is from the wal-index (the -shm file: mxFrame at byte 16,
 * nBackfill — frames already copied — at byte 96, native byte order), a read of 100 bytes, so it
 * asks nothing of the main thread until a checkpoint is due.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const { DatabaseSync } = require('node:sqlite');
const { path, checkpointAtFrames, holdAtFrames, pollMs } = workerData;
const db = new DatabaseSync(path, { timeout: 5000 });
db.exec('PRAGMA synchronous = FULL');
db.exec('PRAGMA wal_autocheckpoint = 0');
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');
const header = Buffer.alloc(100);
let holding = false;
function walFrames() {
  let fd;
  try {
    fd = openSync(path + '-shm', 'r');
    if (readSync(fd, header, 0, 100, 0) < 100) return undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return { frames: header.readUInt32LE(16), copied: header.readUInt32LE(96) };
}
function run(statement, mode) {
  const { busy, log, checkpointed } = statement.get();
  parentPort.postMessage({ kind: 'checkpointed', mode, busy, log, checkpointed });
  return { busy, log, checkpointed };
}
const timer = setInterval(() => {
  if (holding) return;
  const wal = walFrames();
  if (wal === undefined) return;
  // Beside constant writes a passive checkpoint seldom ends with every frame copied, and only
  // then does the next commit start the WAL over: past holdAtFrames, copy the rest with the
  // writer held by the main thread (its writes wait; its event loop does not).
  if (wal.frames >= holdAtFrames && wal.copied < wal.frames) {
    holding = true;
    parentPort.postMessage({ kind: 'hold' });
    return;
  }
  if (wal.frames - wal.copied < checkpointAtFrames) return;
  try {
    run(passive, 'passive');
  } catch (error) {
    parentPort.postMessage({ kind: 'failed', error: String((error && error.message) || error) });
  }
}, pollMs);
parentPort.on('message', (message) => {
  if (message === 'held') {
    try {
      run(restart, 'restart');
    } catch (error) {
      parentPort.postMessage({ kind: 'failed', error: String((error && error.message) || error) });
    }
    holding = false;
    parentPort.postMessage({ kind: 'released' });
  } else if (message === 'now') {
    if (holding) return;
    try {
      run(passive, 'passive');
    } catch (error) {
      parentPort.postMessage({ kind: 'failed', error: String((error && error.message) || error) });
    }
  } else if (message === 'not held') {
    holding = false;
  } else if (message === 'close') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
`;

export interface CheckpointerOptions {
  /** Frames not yet copied that make a checkpoint due (SQLite's own auto-checkpoint size). */
  checkpointAtFrames?: number;
  /** A WAL this long that a passive checkpoint could not copy whole is copied with the writer held. */
  holdAtFrames?: number;
  /** How often the thread reads the WAL's length. */
  pollMs?: number;
  /** How often the main thread looks at the WAL file's size before the thread is started. */
  watchMs?: number;
}

/** What the checkpointer has done: for tests and metrics, read from the thread's reports. */
export interface CheckpointerState {
  started: boolean;
  passive: number;
  restarts: number;
  /** Frames in the WAL and copied, at the last checkpoint. */
  lastLog: number;
  lastCheckpointed: number;
  largestLog: number;
  failures: number;
  /** The thread died: the writer checkpoints itself again (SQLite's auto-checkpoint). */
  fellBack: boolean;
}

/** SQLite's default auto-checkpoint size, in frames (a 4 KiB page and its 24-byte header). */
const CHECKPOINT_AT_FRAMES = 1000;
const FRAME_BYTES = 4096 + 24;

/**
 * WAL checkpoints in a worker thread, so copying the WAL into the database file and syncing both
 * never holds the event loop (issue 24): the writer's own auto-checkpoint is off (`wal_autocheckpoint
 * = 0`, set by openDatabase), and the thread checkpoints once `checkpointAtFrames` frames are not
 * yet copied — the same amount SQLite's auto-checkpoint would copy at a commit.
 *
 * The WAL stays bounded: a passive checkpoint never waits for the writer, so beside constant
 * writes it may never end with every frame copied, and SQLite starts the WAL over only when one
 * has. Once the WAL is `holdAtFrames` long, the thread asks for the writer to be held (`holdWriter`:
 * Kysely's connection lock, so writes queue while the event loop runs) and runs a RESTART
 * checkpoint, after which the next commit starts the WAL from its beginning. So the WAL file stays
 * under about holdAtFrames frames (16 MiB at the default) plus what is written during one
 * checkpoint.
 *
 * The thread starts only once the WAL file has passed checkpointAtFrames frames (a test's or a
 * quiet service's short-lived file never starts one; closing the last connection checkpoints what
 * is left). If the thread dies, the writer's auto-checkpoint is turned back on: checkpoints run on
 * the event loop as before, nothing is lost.
 */
export class SqliteCheckpointer {
  readonly #path: string;
  readonly #holdWriter: <T>(work: () => Promise<T>) => Promise<T>;
  readonly #fallBack: () => void;
  readonly #options: Required<CheckpointerOptions>;
  readonly #state: CheckpointerState = {
    started: false,
    passive: 0,
    restarts: 0,
    lastLog: 0,
    lastCheckpointed: 0,
    largestLog: 0,
    failures: 0,
    fellBack: false,
  };
  #worker: Worker | undefined;
  #watch: NodeJS.Timeout | undefined;
  #release: (() => void) | undefined;
  #closing = false;

  /**
   * `holdWriter` runs work with the writer connection held (no write meanwhile); `fallBack` turns
   * the writer's own auto-checkpoint back on.
   */
  constructor(path: string, holdWriter: <T>(work: () => Promise<T>) => Promise<T>, fallBack: () => void, options: CheckpointerOptions = {}) {
    this.#path = path;
    this.#holdWriter = holdWriter;
    this.#fallBack = fallBack;
    this.#options = {
      checkpointAtFrames: options.checkpointAtFrames ?? CHECKPOINT_AT_FRAMES,
      holdAtFrames: options.holdAtFrames ?? 4 * (options.checkpointAtFrames ?? CHECKPOINT_AT_FRAMES),
      pollMs: options.pollMs ?? 100,
      watchMs: options.watchMs ?? 500,
    };
    this.#watch = setInterval(() => {
      if (this.#walBytes() >= this.#options.checkpointAtFrames * FRAME_BYTES) this.start();
    }, this.#options.watchMs).unref();
  }

  get state(): Readonly<CheckpointerState> {
    return { ...this.#state };
  }

  /** The thread, once started (tests stop it to see the fallback). */
  get thread(): Worker | undefined {
    return this.#worker;
  }

  /** Starts the thread now (it starts by itself once the WAL is long). */
  start(): void {
    clearInterval(this.#watch);
    this.#watch = undefined;
    if (this.#worker !== undefined || this.#closing || this.#state.fellBack) return;
    const worker = new Worker(THREAD, {
      eval: true,
      workerData: {
        path: this.#path,
        checkpointAtFrames: this.#options.checkpointAtFrames,
        holdAtFrames: this.#options.holdAtFrames,
        pollMs: this.#options.pollMs,
      },
    });
    worker.unref();
    this.#worker = worker;
    this.#state.started = true;
    worker.on('message', (message: { kind: string; mode?: string; log?: number; checkpointed?: number }) => this.#heard(message));
    worker.on('error', () => {}); // 'exit' follows
    worker.on('exit', () => {
      this.#worker = undefined;
      this.#release?.();
      if (this.#closing) return;
      this.#state.fellBack = true;
      this.#fallBack();
    });
  }

  /**
   * A passive checkpoint as soon as the thread can, to sync commits made without a sync (its
   * checkpoint syncs the WAL first); false when there is no thread to make it.
   */
  checkpointSoon(): boolean {
    if (this.#worker === undefined) return false;
    this.#worker.postMessage('now');
    return true;
  }

  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#watch);
    const worker = this.#worker;
    if (worker === undefined) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.postMessage('close');
    await exited;
  }

  #heard(message: { kind: string; mode?: string; log?: number; checkpointed?: number }): void {
    if (message.kind === 'checkpointed') {
      if (message.mode === 'restart') this.#state.restarts++;
      else this.#state.passive++;
      this.#state.lastLog = message.log!;
      this.#state.lastCheckpointed = message.checkpointed!;
      this.#state.largestLog = Math.max(this.#state.largestLog, message.log!);
    } else if (message.kind === 'failed') {
      // A failed checkpoint loses nothing (the WAL keeps the frames); the next poll tries again.
      this.#state.failures++;
    } else if (message.kind === 'hold') {
      void this.#holdWriter(
        () =>
          new Promise<void>((resolve) => {
            this.#release = resolve;
            if (this.#worker === undefined) resolve();
            else this.#worker.postMessage('held');
          }),
      )
        // The writer could not be held (closing): try again at a later poll.
        .catch(() => this.#worker?.postMessage('not held'))
        .finally(() => (this.#release = undefined));
    } else if (message.kind === 'released') {
      this.#release?.();
    }
  }

  #walBytes(): number {
    try {
      return statSync(`${this.#path}-wal`).size;
    } catch {
      return 0;
    }
  }
}
