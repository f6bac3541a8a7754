import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { storableText } from './storableText.ts';
import type { WalSync } from './walSync.ts';

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

/** Statements that change nothing: no sync needed after them. */
const READS_ONLY = /^\s*(select|begin|rollback|savepoint|release)\b/i;

/**
 * Kysely's SqliteDialect over Node's built-in node:sqlite, with prepared statements reused: one
 * object per SQL text, made once (whether it returns rows is asked once, not per query).
 *
 * A 202 is a promise: nothing is answered before the writes it saw are on disk. SQLite commits
 * without syncing (synchronous = NORMAL, openSqlite) and `flushed()` — awaited by the driver each
 * time a use of the connection ends (sqliteDriver.ts) — waits for a sync of the WAL that covers
 * every commit this connection made or saw (WalSync: on libuv's thread pool, not the event loop).
 */
export class NodeSqliteDatabase implements SqliteDatabase {
  readonly raw: DatabaseSync;
  readonly #statements = new Map<string, SqliteStatement>();
  readonly #sync: WalSync | undefined;
  readonly #written: (() => void) | undefined;
  readonly #dataVersion: StatementSync;
  /** The WalSync mark of this connection's last commit, or of the last change it saw. */
  #mark = 0;
  #seenVersion: number;

  constructor(raw: DatabaseSync, options: { sync?: WalSync; written?: () => void } = {}) {
    this.raw = raw;
    this.#sync = options.sync;
    this.#written = options.written;
    this.#dataVersion = raw.prepare('PRAGMA data_version');
    this.#seenVersion = this.#version();
  }

  prepare(sql: string): SqliteStatement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      const stmt = this.raw.prepare(sql);
      const reader = STEPPED.test(sql) || stmt.columns().length > 0;
      statement = this.#sync === undefined || READS_ONLY.test(sql) ? wrap(stmt, reader) : this.#tracked(stmt, reader);
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        this.#statements.delete(this.#statements.keys().next().value!);
      }
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * Undefined when everything this connection wrote or read is on disk; else resolves once it is.
   * Another connection's commits (this process's or another's) are seen through data_version,
   * which changes whenever one commits: what a read may have returned is then synced too.
   */
  flushed(): Promise<void> | undefined {
    if (this.#sync === undefined || !this.raw.isOpen) return undefined;
    const version = this.#version();
    if (version !== this.#seenVersion) {
      this.#seenVersion = version;
      this.#mark = this.#sync.mark();
    }
    return this.#sync.synced(this.#mark);
  }

  close(): void {
    this.#statements.clear();
    if (this.raw.isOpen) this.raw.close();
  }

  #version(): number {
    return Number((this.#dataVersion.get() as { data_version: number }).data_version);
  }

  /** A write: once it has committed (now, or at the transaction's end), it needs a sync. */
  #tracked(stmt: StatementSync, reader: boolean): SqliteStatement {
    const plain = wrap(stmt, reader);
    const committed = () => {
      if (this.raw.isTransaction) return;
      this.#mark = this.#sync!.mark();
      this.#written?.();
    };
    return {
      reader,
      all: (parameters) => {
        try {
          return plain.all(parameters);
        } finally {
          committed();
        }
      },
      run: (parameters) => {
        try {
          return plain.run(parameters);
        } finally {
          committed();
        }
      },
      iterate: plain.iterate,
    };
  }
}

/**
 * Statements that do their work one step at a time while returning rows of no columns:
 * incremental_vacuum frees one page per step, so it must be stepped to the end (`all`), not
 * stepped once (`run`).
 */
const STEPPED = /^\s*pragma\s+incremental_vacuum\b/i;

function wrap(stmt: StatementSync, reader: boolean): SqliteStatement {
  return {
    reader,
    all: (parameters) => stmt.all(...sqliteParameters(parameters)),
    run: (parameters) => stmt.run(...sqliteParameters(parameters)),
    iterate: (parameters) => stmt.iterate(...sqliteParameters(parameters)),
  };
}

/** Opens (creating the folder and file if needed) an SQLite database with our settings. */
export function openSqlite(path: string, options: { sync?: WalSync; written?: () => void } = {}): NodeSqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new DatabaseSync(path, { enableForeignKeyConstraints: true, timeout: 5000 });
  // Pages freed by the retention purge go back to the file system (PRAGMA incremental_vacuum).
  // It takes effect only on a file without tables yet, and must precede WAL; a file made before
  // gets it from `svc migrate --vacuum` (a one-time VACUUM). Elsewhere it changes nothing.
  raw.exec('PRAGMA auto_vacuum = INCREMENTAL');
  raw.exec('PRAGMA journal_mode = WAL');
  // A 202 is a promise: every commit reaches the disk before we answer — synced by WalSync off
  // the event loop (NodeSqliteDatabase.flushed), not by SQLite at each commit. NORMAL still syncs
  // the WAL's header when the WAL starts over, and both files around a checkpoint.
  raw.exec('PRAGMA synchronous = NORMAL');
  // Checkpoints (copying the WAL into the file, and their syncs) run in a thread of their own
  // (SqliteCheckpointer), not inside a commit on the event loop.
  raw.exec('PRAGMA wal_autocheckpoint = 0');
  raw.exec('PRAGMA foreign_keys = ON');
  return new NodeSqliteDatabase(raw, options);
}
