import { type CompiledQuery, type QueryResult, RawNode, SqliteAdapter } from 'kysely';
import type { Db, DialectName } from './database.ts';

// The request path's few hot statements, written once as SQL instead of built and compiled by
// Kysely's query builder on every call (which cost more than running them). They still run
// through Kysely's executor, so they use the caller's connection or transaction and its lock.
// SQLite keeps one prepared statement per SQL text (sqlite.ts), so each of these is prepared once.

/** Which engine a Db (or a transaction of it) talks to. */
export function dialectOf(db: Db): DialectName {
  return db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres';
}

/** `?` placeholders, numbered `$1, $2, …` for PostgreSQL. */
export function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

/** One array per column of `rows`, in the order given: the parameters of a PostgreSQL `unnest(…)` insert. */
export function columnsOf<Row>(rows: readonly Row[], columns: readonly (keyof Row)[]): unknown[][] {
  return columns.map((column) => rows.map((row) => row[column]));
}

export interface Statement<Row> {
  /** The rows it returns (none for a write without `returning`). */
  rows(db: Db, parameters: readonly unknown[]): Promise<Row[]>;
  /** The whole result: rows and, for writes, the number of rows affected. */
  execute(db: Db, parameters: readonly unknown[]): Promise<QueryResult<Row>>;
}

/**
 * A statement written with `?` placeholders; give `postgres` when the PostgreSQL text differs
 * (then written with `$n` itself).
 */
export function statement<Row = never>(sqlite: string, postgres: string = numbered(sqlite)): Statement<Row> {
  return prepare<Row>({ sqlite, postgres });
}

/** A statement only PostgreSQL runs (written with `$n`), for the shapes SQLite does row by row. */
export function postgresStatement<Row = never>(postgres: string): Statement<Row> {
  return prepare<Row>({ postgres });
}

function prepare<Row>(texts: { sqlite?: string; postgres: string }): Statement<Row> {
  const nodes = {
    sqlite: texts.sqlite === undefined ? undefined : RawNode.createWithSql(texts.sqlite),
    postgres: RawNode.createWithSql(texts.postgres),
  };
  const queryId = { queryId: 'prepared' };
  const execute = (db: Db, parameters: readonly unknown[]) => {
    const dialect = dialectOf(db);
    const query = nodes[dialect];
    if (query === undefined) throw new Error(`no SQLite text for: ${texts.postgres}`);
    const compiled = { sql: texts[dialect], query, parameters, queryId } as unknown as CompiledQuery<Row>;
    return db.executeQuery(compiled);
  };
  return {
    execute,
    rows: async (db, parameters) => (await execute(db, parameters)).rows,
  };
}
