import { createRequire } from 'node:module';
import { type Driver, Kysely, PostgresDialect, SqliteDialect, type SqliteDialectConfig } from 'kysely';
import type pg from 'pg';
import type { Tables } from './tables.ts';
import { openSqlite, WAL_AUTOCHECKPOINT_PAGES, WRITER_CACHE_KIB } from './sqlite.ts';
import { type CheckpointerOptions, SqliteCheckpointer } from './sqliteCheckpointer.ts';
import { storableParameters } from './storableText.ts';

export type DialectName = 'sqlite' | 'postgres';
export type Db = Kysely<Tables>;

export interface Database {
  readonly db: Db;
  /**
   * For reads on the request path. With SQLite a second connection: WAL lets it read while the
   * writer holds its transaction, so no request waits behind a worker's batch. With PostgreSQL,
   * the same pool as `db`.
   */
  readonly reader: Db;
  readonly dialect: DialectName;
  /** The SQLite file path, or undefined for PostgreSQL. */
  readonly sqlitePath: string | undefined;
  /** SQLite (a file): the thread that checkpoints its WAL off the event loop; otherwise undefined. */
  readonly checkpointer: SqliteCheckpointer | undefined;
  /** The PostgreSQL pool, for LISTEN/NOTIFY; undefined for SQLite. */
  readonly pool: pg.Pool | undefined;
  /**
   * Runs a worker's writes (one transaction, or statements) on `db` without a disk sync at each
   * commit, for records that are redone if lost: a worker's claims and outcomes, never a 202's
   * message. With SQLite, whose syncs block the one thread that also answers requests, they are
   * synced by the next synced commit or within a second (NodeSqliteDatabase.withoutSync); with
   * PostgreSQL, work runs as it is.
   */
  withoutSync<T>(work: (db: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// pg returns int8 and numeric as strings; every bigint we store is epoch milliseconds or a
// counter, well inside 2^53, so one parser here makes both dialects return numbers.
const INT8_OID = 20;
function pgTypes(postgres: typeof pg) {
  return {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === INT8_OID) return (value: string) => Number(value);
      return postgres.types.getTypeParser(oid, format);
    },
  };
}

// The PostgreSQL driver is loaded only by a process that uses PostgreSQL (≈ 8 MiB resident).
const require = createRequire(import.meta.url);

const CONNECT_TIMEOUT_MS = 5000;

/** pg's Client, with every statement's parameters made storable (storableText.ts: no NUL). */
function storableTextClient(postgres: typeof pg): typeof pg.Client {
  class StorableTextClient extends postgres.Client {}
  const query = postgres.Client.prototype.query as (...args: unknown[]) => unknown;
  StorableTextClient.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (Array.isArray(args[1])) args[1] = storableParameters(args[1]);
    else if (args[0] !== null && typeof args[0] === 'object' && Array.isArray((args[0] as pg.QueryConfig).values)) {
      args[0] = { ...args[0], values: storableParameters((args[0] as pg.QueryConfig).values!) };
    }
    return query.apply(this, args);
  } as unknown as typeof query & pg.Client['query'];
  return StorableTextClient;
}

/**
 * SQLite's dialect for the writer connection: once Kysely's lock on the connection is held and
 * before the connection is used, it waits for what `beforeWrite` returns (the checkpointer's pause).
 */
class WriterDialect extends SqliteDialect {
  readonly #beforeWrite: () => Promise<void> | undefined;

  constructor(config: SqliteDialectConfig, beforeWrite: () => Promise<void> | undefined) {
    super(config);
    this.#beforeWrite = beforeWrite;
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    const acquire = driver.acquireConnection.bind(driver);
    driver.acquireConnection = async () => {
      const connection = await acquire();
      await this.#beforeWrite();
      return connection;
    };
    return driver;
  }
}

export function sqlitePathOf(url: string): string | undefined {
  if (!url.startsWith('sqlite:')) return undefined;
  return url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
}

export function openDatabase(url: string, options: { poolSize: number; checkpoints?: CheckpointerOptions }): Database {
  const sqlitePath = sqlitePathOf(url);
  if (sqlitePath !== undefined) {
    const writer = openSqlite(sqlitePath);
    // Only the writer keeps pages between transactions: a reader's cache is dropped whenever
    // another connection has written.
    writer.raw.exec(`PRAGMA cache_size = -${WRITER_CACHE_KIB}`);
    let checkpointer: SqliteCheckpointer | undefined;
    const db = new Kysely<Tables>({ dialect: new WriterDialect({ database: writer }, () => checkpointer?.beforeWrite()) });
    const reader =
      sqlitePath === ':memory:'
        ? db
        : new Kysely<Tables>({ dialect: new SqliteDialect({ database: openSqlite(sqlitePath) }) });
    // Checkpoints of the file run in a thread of their own, not at the writer's commits (issues 19, 24).
    if (sqlitePath !== ':memory:') {
      checkpointer = new SqliteCheckpointer(
        sqlitePath,
        () => {
          if (writer.raw.isOpen) writer.raw.exec(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
        },
        options.checkpoints,
      );
      writer.raw.exec(`PRAGMA wal_autocheckpoint = ${checkpointer.writerBackstopFrames}`);
      writer.checkpointElsewhere = () => checkpointer!.checkpointSoon();
    }
    return {
      db,
      reader,
      dialect: 'sqlite',
      sqlitePath,
      checkpointer,
      pool: undefined,
      // Holding the connection (Kysely's lock) for the whole work: nothing else commits meanwhile.
      withoutSync: (work) => db.connection().execute((connection) => writer.withoutSync(() => work(connection))),
      close: async () => {
        await checkpointer?.close();
        if (reader !== db) await reader.destroy();
        await db.destroy();
      },
    };
  }
  const postgres = require('pg') as typeof pg;
  const pool = new postgres.Pool({
    Client: storableTextClient(postgres),
    connectionString: url,
    max: options.poolSize,
    types: pgTypes(postgres),
    // While the database is away, a request waits this long for a connection, then gets a 503.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // A client that loses its connection (a restart, a failover: 57P01) emits 'error'; with no
  // listener that would crash the process. Idle clients are the pool's (it drops them); a client
  // checked out has its query rejected, is released with the error and discarded — the listener
  // only keeps the event from being unhandled.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    reader: db,
    dialect: 'postgres',
    sqlitePath: undefined,
    checkpointer: undefined,
    pool,
    withoutSync: (work) => work(db),
    close: () => db.destroy(),
  };
}
