import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

type Parameter = null | number | bigint | string | Uint8Array;

function toSqlite(value: unknown): Parameter {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === undefined) return null;
  return value as Parameter;
}

const STATEMENT_CACHE_SIZE = 500;

/** Kysely's SqliteDialect over Node's built-in node:sqlite, with prepared statements reused. */
export class NodeSqliteDatabase implements SqliteDatabase {
  readonly raw: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();

  constructor(raw: DatabaseSync) {
    this.raw = raw;
  }

  prepare(sql: string): SqliteStatement {
    const stmt = this.#statement(sql);
    const params = (parameters: ReadonlyArray<unknown>) => parameters.map(toSqlite);
    return {
      reader: stmt.columns().length > 0,
      all: (parameters) => stmt.all(...params(parameters)),
      run: (parameters) => stmt.run(...params(parameters)),
      iterate: (parameters) => stmt.iterate(...params(parameters)),
    };
  }

  close(): void {
    this.#statements.clear();
    if (this.raw.isOpen) this.raw.close();
  }

  #statement(sql: string): StatementSync {
    let stmt = this.#statements.get(sql);
    if (stmt === undefined) {
      stmt = this.raw.prepare(sql);
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        this.#statements.delete(this.#statements.keys().next().value!);
      }
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }
}

/** Opens (creating the folder and file if needed) an SQLite database with our settings. */
export function openSqlite(path: string): NodeSqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new DatabaseSync(path, { enableForeignKeyConstraints: true, timeout: 5000 });
  raw.exec('PRAGMA journal_mode = WAL');
  // A 202 is a promise: every commit reaches the disk before we answer.
  raw.exec('PRAGMA synchronous = FULL');
  raw.exec('PRAGMA foreign_keys = ON');
  return new NodeSqliteDatabase(raw);
}
