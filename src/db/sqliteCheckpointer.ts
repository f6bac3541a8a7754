import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { WAL_AUTOCHECKPOINT_PAGES } from './sqlite.ts';

/**
 * The thread: its own connection, which copies the WAL into the database file (synchronous =
 * FULL: the WAL is synced before the copy, the file after it, and SQLite counts frames as copied
 * only then). It checkpoints every intervalMs while the WAL file changes, asking nothing of the
 * main thread. It never opens a file of the database itself: POSIX drops every lock a process
 * holds on a file when the process closes any descriptor of it, and a lost lock on the -shm
 * lets another process's last connection truncate it under this one's mapping (SIGBUS).
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const { DatabaseSync } = require('node:sqlite');
const { path, intervalMs } = workerData;
const db = new DatabaseSync(path, { timeout: 5000 });
db.exec('PRAGMA synchronous = FULL');
db.exec('PRAGMA wal_autocheckpoint = 0');
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
let seen = '';
function checkpoint(quiet) {
  let done = { log: 0, checkpointed: 0 };
  try {
    done = passive.get();
  } catch {
    // A failed checkpoint loses nothing (the WAL keeps the frames): the next one tries again.
    if (!quiet) return;
  }
  parentPort.postMessage({ log: done.log, checkpointed: done.checkpointed, quiet });
}
const timer = setInterval(() => {
  let wal;
  try {
    const stat = statSync(path + '-wal');
    wal = stat.size + ':' + stat.mtimeMs;
  } catch {
    return;
  }
  if (wal === seen) return;
  seen = wal;
  checkpoint(false);
}, intervalMs);
parentPort.on('message', (message) => {
  if (message === 'now') checkpoint(false);
  else if (message === 'quiet') checkpoint(true);
  else if (message === 'close') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
`;

export interface CheckpointerOptions {
  /** The WAL file's length that starts the thread. */
  checkpointAtFrames?: number;
  /** How often the thread checkpoints while the WAL changes. */
  intervalMs?: number;
  /** How often the main thread looks at the WAL file's size before the thread is started. */
  watchMs?: number;
  /** The writer's own auto-checkpoint beside the thread (WRITER_BACKSTOP_FRAMES). */
  writerBackstopFrames?: number;
  /** The WAL length at a checkpoint of the thread past which the writer pauses for the next one (QUIET_AT_FRAMES). */
  quietAtFrames?: number;
  /** The longest the writer waits for that checkpoint (QUIET_LIMIT_MS). */
  quietLimitMs?: number;
}

/** What the checkpointer has done: for tests and metrics, read from the thread's reports. */
export interface CheckpointerState {
  started: boolean;
  passive: number;
  /** Checkpoints made while the writer paused for them (beforeWrite). */
  quiet: number;
  /** Frames copied by the last checkpoint. */
  lastCheckpointed: number;
  /** The thread died: the writer checkpoints itself again (SQLite's auto-checkpoint). */
  fellBack: boolean;
}

/**
 * Once a second while the WAL changes: what SQLite's auto-checkpoint every WAL_AUTOCHECKPOINT_PAGES
 * copied at about 10,000 pages a second, the rate of a busy service; the same second within which
 * commits made without a sync are synced (sqlite.ts).
 */
const CHECKPOINT_INTERVAL_MS = 1000;

/** A 4 KiB page and its 24-byte header. */
const FRAME_BYTES = 4096 + 24;

/**
 * The writer's own auto-checkpoint while the thread runs: past this many frames in the WAL, each
 * commit copies what the thread has not yet copied (little: at most a second's worth), so the copy ends with every frame copied and the next commit
 * starts the WAL over. A passive checkpoint beside constant writes seldom ends so (new frames
 * come while it copies), and nothing else restarts the WAL: this bounds it, without the writer
 * ever waiting on the thread (a checkpoint that finds another under way gives up at once).
 */
export const WRITER_BACKSTOP_FRAMES = 4 * WAL_AUTOCHECKPOINT_PAGES;

/**
 * When the thread's last checkpoint found this many frames in the WAL, the writer's next
 * transaction waits for a checkpoint of the thread's (beforeWrite), so the WAL is all copied and
 * starts over, without the backstop's copy on the event loop. Under writes that never pause, the
 * thread's passive checkpoint never ends with nothing left to copy (new frames come while it
 * copies), so the WAL never starts over by itself; at 1,000,000 messages over 3,000 projects the
 * backstop's copies took about 8 % of the event loop (bench/README, stop 35). The pause holds the
 * writer only: requests, reads and answers go on meanwhile.
 */
export const QUIET_AT_FRAMES = 2 * WAL_AUTOCHECKPOINT_PAGES;

/** The longest a writer waits for that checkpoint (a thread that does not answer: the backstop remains). */
const QUIET_LIMIT_MS = 2000;

/**
 * WAL checkpoints in a worker thread, so most of the copying of the WAL into the database file and
 * its syncs happen off the event loop (issues 19 and 24): the thread, with its own connection,
 * runs a passive checkpoint every second while the WAL changes, and the writer's own
 * auto-checkpoint is a backstop far beyond (WRITER_BACKSTOP_FRAMES, set by openDatabase).
 *
 * The thread starts only once the WAL file has passed checkpointAtFrames frames (a test's or a
 * quiet service's short-lived file never starts one; closing the last connection checkpoints what
 * is left). If the thread dies, the writer's auto-checkpoint goes back to WAL_AUTOCHECKPOINT_PAGES:
 * checkpoints run on the event loop as before, nothing is lost.
 */
export class SqliteCheckpointer {
  readonly #path: string;
  readonly #fallBack: () => void;
  readonly #options: Required<CheckpointerOptions>;
  readonly #state: CheckpointerState = {
    started: false,
    passive: 0,
    quiet: 0,
    lastCheckpointed: 0,
    fellBack: false,
  };
  #worker: Worker | undefined;
  #watch: NodeJS.Timeout | undefined;
  #closing = false;
  /** The thread's last checkpoint began with QUIET_AT_FRAMES or more in the WAL: the writer should pause. */
  #quietWanted = false;
  /** Ends the writer's pause: the thread's answer, its exit, or QUIET_LIMIT_MS. */
  #endQuiet: (() => void) | undefined;

  /** `fallBack` turns the writer's own auto-checkpoint back to its size without a thread. */
  constructor(path: string, fallBack: () => void, options: CheckpointerOptions = {}) {
    this.#path = path;
    this.#fallBack = fallBack;
    this.#options = {
      checkpointAtFrames: options.checkpointAtFrames ?? WAL_AUTOCHECKPOINT_PAGES,
      intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS,
      watchMs: options.watchMs ?? 500,
      writerBackstopFrames: options.writerBackstopFrames ?? WRITER_BACKSTOP_FRAMES,
      quietAtFrames: options.quietAtFrames ?? QUIET_AT_FRAMES,
      quietLimitMs: options.quietLimitMs ?? QUIET_LIMIT_MS,
    };
    this.#watch = setInterval(() => {
      if (this.#walBytes() >= this.#options.checkpointAtFrames * FRAME_BYTES) this.start();
    }, this.#options.watchMs).unref();
  }

  /** The writer's own auto-checkpoint while the thread runs (openDatabase sets it). */
  get writerBackstopFrames(): number {
    return this.#options.writerBackstopFrames;
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
      workerData: { path: this.#path, intervalMs: this.#options.intervalMs },
    });
    worker.unref();
    this.#worker = worker;
    this.#state.started = true;
    worker.on('message', (message: { log: number; checkpointed: number; quiet: boolean }) => {
      if (message.quiet) {
        this.#state.quiet++;
        this.#endQuiet?.();
      } else this.#state.passive++;
      this.#state.lastCheckpointed = message.checkpointed;
      // A checkpoint copies the frames the WAL had when it began: a long WAL means writes came all along.
      this.#quietWanted = !message.quiet && message.log >= this.#options.quietAtFrames;
    });
    worker.on('error', () => {}); // 'exit' follows
    worker.on('exit', () => {
      this.#worker = undefined;
      this.#endQuiet?.();
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

  /**
   * Called with the writer's connection held, before it is used: when the thread has asked for it
   * (QUIET_AT_FRAMES), a checkpoint of the thread's while nothing writes, so it copies the whole
   * WAL and the next commit starts the WAL over; otherwise nothing to wait for.
   */
  beforeWrite(): Promise<void> | undefined {
    const worker = this.#worker;
    if (!this.#quietWanted || worker === undefined || this.#endQuiet !== undefined) return undefined;
    this.#quietWanted = false;
    return new Promise<void>((resolve) => {
      const limit = setTimeout(() => this.#endQuiet?.(), this.#options.quietLimitMs);
      this.#endQuiet = () => {
        clearTimeout(limit);
        this.#endQuiet = undefined;
        resolve();
      };
      worker.postMessage('quiet');
    });
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

  #walBytes(): number {
    try {
      return statSync(`${this.#path}-wal`).size;
    } catch {
      return 0;
    }
  }
}
