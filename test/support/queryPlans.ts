import {
  CompiledQuery,
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
      ? await asUnpartitioned(connection, (result.rows[0]!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan as PlanNode)
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

/**
 * PostgreSQL's time-partitioned tables (migration 0028) are read through their partitions, each
 * with its own copy of the table's indexes. Names each read by its table and index (the
 * partition's root's), so a plan test asserts the same names whatever the partitions are; a
 * read of a partition that holds no row (a period still ahead, the default partition) becomes an
 * "Empty …" node, which no assertion counts as a read: it costs nothing, whatever its access.
 */
async function asUnpartitioned(connection: DatabaseConnection, plan: PlanNode): Promise<PlanNode> {
  const nodes = planNodes(plan);
  const names = [...new Set(nodes.flatMap((node) => [node['Relation Name'], node['Index Name']]).filter((name) => name !== undefined))];
  const partitions = await connection.executeQuery<{ name: string; root: string; table: boolean }>(
    CompiledQuery.raw(
      `select c.relname as name, r.relname as root, c.relkind = 'r' as table
       from pg_class c join pg_class r on r.oid = pg_partition_root(c.oid)
       where c.relispartition and c.relname = any($1) and c.relnamespace = current_schema()::regnamespace`,
      [names],
    ),
  );
  const rootOf = new Map(partitions.rows.map((row) => [row.name, row.root]));
  const empty = new Set<string>();
  for (const { name } of partitions.rows.filter((row) => row.table)) {
    const held = await connection.executeQuery<{ held: boolean }>(CompiledQuery.raw(`select exists (select 1 from only "${name}") as held`));
    if (!held.rows[0]!.held) empty.add(name);
  }
  for (const node of nodes) {
    const relation = node['Relation Name'];
    if (relation !== undefined && rootOf.has(relation)) {
      if (empty.has(relation)) node['Node Type'] = `Empty ${node['Node Type']}`;
      node['Relation Name'] = rootOf.get(relation);
      if (typeof node.Alias === 'string') node.Alias = node.Alias.replace(/_\d+$/, '');
    }
    const index = node['Index Name'];
    if (index !== undefined && rootOf.has(index)) node['Index Name'] = rootOf.get(index);
  }
  return plan;
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
