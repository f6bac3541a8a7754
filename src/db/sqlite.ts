import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { storableText } from './storableText.ts';

type Parameter = null | number | bigint | string | Uint8Array;

function toSqlite(value: unknown): Parameter {
  if (typeof value === 'string') return storableText(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === undefined) return null;
  return value as Parameter;
}

function sqliteParameters(parameters: ReadonlyArray<unknown>): Parameter[] {
  const out = new Array<Parameter>(parameters.length);
  for (let i = 0; i < parameters.length; i++) out[i] = toSqlite(parameters[i]);
  return out;
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * A checkpoint runs once the WAL holds this many pages not yet copied (SQLite's default is 1,000:
 * 4 MB): in the checkpoint thread of a file (sqliteCheckpointer.ts), otherwise inside the commit
 * that takes the WAL past it (SQLite's automatic checkpoint). Each checkpoint syncs the WAL and the database file and copies
 * every distinct page the WAL holds; the same pages rewritten by many commits (a message's
 * index pages at accept, SENT, DELIVERED, READ and its webhooks) are copied once per
 * checkpoint. At 10,000 pages (40 MB of WAL) the spread burst (bench/spreadBurst.ts) at 300,000
 * messages over 3,000 projects checkpoints 9 times instead of 79–87, spends about 1.0 s of its
 * event loop in them instead of 3.9 s and writes half the bytes to storage (bench/README, "Branch
 * hspread2"); a single checkpoint was not longer at those loads (its two syncs are most of it).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/**
 * The writer's page cache, in KiB (SQLite's default is 2 MiB). Beside thousands of projects each
 * status change writes the newest leaf of its project in every per-project index; with 2 MiB
 * nearly each of those pages was read again from the file (about 120 reads a message at 1,000,000
 * messages over 3,000 projects, 40 with this cache; bench/README, "Webhooks at 1,000,000 messages on
 * SQLite"). The cache fills only as far as the pages used: a small file costs what it holds.
 */
export const WRITER_CACHE_KIB = 256 * 1024;

/** How long a commit made without syncing may stay unsynced when no synced commit follows. */
const SYNC_WITHIN_MS = 1000;

/**
 * Kysely's SqliteDialect over Node's built-in node:sqlite, with prepared statements reused: one
 * object per SQL text, made once (whether it returns rows is asked once, not per query).
 *
 * Commits are synced to disk (synchronous = FULL: a 202 is a promise), except inside
 * withoutSync: see there.
 */
export class NodeSqliteDatabase implements SqliteDatabase {
  readonly raw: DatabaseSync;
  readonly #statements = new Map<string, SqliteStatement>();
  #syncing = true;
  /** When the first commit not synced since the last synced one was made; undefined: none. */
  #unsyncedSince: number | undefined;
  #syncTimer: NodeJS.Timeout | undefined;
  /**
   * Set when a thread checkpoints this file (SqliteCheckpointer): asks it for a checkpoint now and
   * says whether it took the job; otherwise the sync below checkpoints on this thread.
   */
  checkpointElsewhere: (() => boolean) | undefined;

  constructor(raw: DatabaseSync) {
    this.raw = raw;
  }

  prepare(sql: string): SqliteStatement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = sql === 'commit' ? this.#commit(wrap(this.raw.prepare(sql))) : wrap(this.raw.prepare(sql), STEPPED.test(sql));
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        this.#statements.delete(this.#statements.keys().next().value!);
      }
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Runs `work` with commits that are not synced to disk one by one (synchronous = NORMAL), for
   * records a crash of the machine may lose because they are redone (a worker's claims and
   * outcomes: at least once). The caller holds the connection (Kysely's lock), so no other
   * transaction commits meanwhile. WAL keeps commits in order: the next synced commit — the next
   * 202's — puts these on disk too; without one, a checkpoint does within SYNC_WITHIN_MS. A crash
   * of the process loses nothing either way (the OS has the writes).
   */
  async withoutSync<T>(work: () => Promise<T>): Promise<T> {
    this.raw.exec('PRAGMA synchronous = NORMAL');
    this.#syncing = false;
    try {
      return await work();
    } finally {
      this.raw.exec('PRAGMA synchronous = FULL');
      this.#syncing = true;
      this.#unsyncedSince ??= Date.now();
      this.#syncTimer ??= setTimeout(() => this.#sync(), SYNC_WITHIN_MS).unref();
    }
  }

  close(): void {
    clearTimeout(this.#syncTimer);
    this.#statements.clear();
    if (this.raw.isOpen) {
      if (this.#unsyncedSince !== undefined) this.raw.exec('PRAGMA wal_checkpoint(PASSIVE)');
      this.raw.close();
    }
  }

  /** A synced commit syncs every commit before it (the WAL is written in order). */
  #commit(commit: SqliteStatement): SqliteStatement {
    return {
      ...commit,
      run: (parameters) => {
        const result = commit.run(parameters);
        if (this.#syncing) this.#unsyncedSince = undefined;
        return result;
      },
    };
  }

  #sync(): void {
    this.#syncTimer = undefined;
    if (this.#unsyncedSince === undefined || !this.raw.isOpen) return;
    // A synced commit came since, but commits without one followed it: wait for the next one.
    const wait = this.#unsyncedSince + SYNC_WITHIN_MS - Date.now();
    // Inside someone's transaction: try again right after it.
    if (wait > 0 || this.raw.isTransaction) {
      this.#syncTimer = setTimeout(() => this.#sync(), Math.max(wait, 10)).unref();
      return;
    }
    // A checkpoint syncs the WAL before copying it: every commit made before it starts is synced.
    if (this.checkpointElsewhere?.() !== true) this.raw.exec('PRAGMA wal_checkpoint(PASSIVE)');
    this.#unsyncedSince = undefined;
  }
}

/**
 * Statements that do their work one step at a time while returning rows of no columns:
 * incremental_vacuum frees one page per step, so it must be stepped to the end (`all`), not
 * stepped once (`run`).
 */
const STEPPED = /^\s*pragma\s+incremental_vacuum\b/i;

function wrap(stmt: StatementSync, stepped = false): SqliteStatement {
  return {
    reader: stepped || stmt.columns().length > 0,
    all: (parameters) => stmt.all(...sqliteParameters(parameters)),
    run: (parameters) => stmt.run(...sqliteParameters(parameters)),
    iterate: (parameters) => stmt.iterate(...sqliteParameters(parameters)),
  };
}

/** Opens (creating the folder and file if needed) an SQLite database with our settings. */
export function openSqlite(path: string): NodeSqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new DatabaseSync(path, { enableForeignKeyConstraints: true, timeout: 5000 });
  // Pages freed by the retention purge go back to the file system (PRAGMA incremental_vacuum).
  // It takes effect only on a file without tables yet, and must precede WAL; a file made before
  // gets it from `svc migrate --vacuum` (a one-time VACUUM). Elsewhere it changes nothing.
  raw.exec('PRAGMA auto_vacuum = INCREMENTAL');
  raw.exec('PRAGMA journal_mode = WAL');
  // A 202 is a promise: every commit reaches the disk before we answer (see withoutSync).
  raw.exec('PRAGMA synchronous = FULL');
  raw.exec('PRAGMA foreign_keys = ON');
  raw.exec(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  return new NodeSqliteDatabase(raw);
}
