import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresDialect,
  type QueryResult,
  SqliteDialect,
} from 'kysely';
import type { Database, Db } from '../../src/db/database.ts';
import { openSqlite } from '../../src/db/sqlite.ts';
import type { Tables } from '../../src/db/tables.ts';

// Plan tests: call the service's own repository functions with a Db that, instead of running each
// statement, asks the database for its plan (EXPLAIN (FORMAT JSON) on PostgreSQL, EXPLAIN QUERY
// PLAN on SQLite) with the same text and parameters, records it and returns no rows. A plan
// test asserts which index a query walks: a behaviour, not a timing.

export interface RecordedPlan {
  sql: string;
  /** PostgreSQL: the JSON plan's root node. SQLite: the EXPLAIN QUERY PLAN detail lines. */
  plan: PlanNode | string[];
}

export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
  [key: string]: unknown;
}

export interface ExplainingDb {
  db: Db;
  /** The plans recorded since the last take, oldest first; clears them. */
  take(): RecordedPlan[];
  close(): Promise<void>;
}

function explainingDialect(base: Dialect, isPostgres: boolean, plans: RecordedPlan[]): Dialect {
  const explain = async (connection: DatabaseConnection, compiled: CompiledQuery): Promise<QueryResult<never>> => {
    const text = compiled.sql;
    if (/^\s*(begin|commit|rollback|select set_config)/i.test(text)) return connection.executeQuery(compiled) as never;
    const prefix = isPostgres ? 'explain (format json) ' : 'explain query plan ';
    const result = await connection.executeQuery<Record<string, unknown>>({ ...compiled, sql: prefix + text });
    const plan = isPostgres
      ? ((result.rows[0]!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan as PlanNode)
      : result.rows.map((row) => String(row.detail));
    plans.push({ sql: text, plan });
    return { rows: [] };
  };
  return {
    createAdapter: () => base.createAdapter(),
    createQueryCompiler: () => base.createQueryCompiler(),
    createIntrospector: (db) => base.createIntrospector(db),
    createDriver: (): Driver => {
      const driver = base.createDriver();
      const wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();
      const unwrap = new WeakMap<DatabaseConnection, DatabaseConnection>();
      return {
        init: () => driver.init(),
        destroy: () => driver.destroy(),
        acquireConnection: async () => {
          const connection = await driver.acquireConnection();
          let outer = wrapped.get(connection);
          if (outer === undefined) {
            outer = {
              executeQuery: <R>(compiled: CompiledQuery) => explain(connection, compiled) as Promise<QueryResult<R>>,
              streamQuery: () => {
                throw new Error('not in plan tests');
              },
            };
            wrapped.set(connection, outer);
            unwrap.set(outer, connection);
          }
          return outer;
        },
        beginTransaction: (connection, settings) => driver.beginTransaction(unwrap.get(connection)!, settings),
        commitTransaction: (connection) => driver.commitTransaction(unwrap.get(connection)!),
        rollbackTransaction: (connection) => driver.rollbackTransaction(unwrap.get(connection)!),
        releaseConnection: (connection) => driver.releaseConnection(unwrap.get(connection)!),
      };
    },
  };
}

/** A Db over the same database whose statements record their plans instead of running. */
export function explainingDb(database: Database): ExplainingDb {
  const plans: RecordedPlan[] = [];
  const dialect =
    database.dialect === 'postgres'
      ? explainingDialect(new PostgresDialect({ pool: database.pool! }), true, plans)
      : explainingDialect(new SqliteDialect({ database: openSqlite(database.sqlitePath!) }), false, plans);
  const db = new Kysely<Tables>({ dialect });
  return {
    db,
    take: () => plans.splice(0),
    // PostgreSQL's pool is the Database's own, closed with it; SQLite's connection is this one's.
    close: async () => {
      if (database.dialect === 'sqlite') await db.destroy();
    },
  };
}

/** Every node of a PostgreSQL plan, depth first. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** A one-line description of a plan, for assertion messages. */
export function describePlan(plan: PlanNode | string[]): string {
  if (Array.isArray(plan)) return plan.join(' | ');
  return planNodes(plan)
    .map((node) =>
      [node['Node Type'], node['Index Name'] ?? node['Relation Name'], node['Index Cond'] && `cond ${node['Index Cond']}`, node.Filter && `filter ${node.Filter}`]
        .filter(Boolean)
        .join(' '),
    )
    .join(' → ');
}
