import {
  type DatabaseConnection,
  type Driver,
  SqliteAdapter,
  SqliteDialect,
  type TransactionSettings,
} from 'kysely';
import type { NodeSqliteDatabase } from './sqlite.ts';

/** One use of the connection at a time, in the order asked. */
class Turns {
  #held = false;
  readonly #queue: (() => void)[] = [];

  async take(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return;
    }
    await new Promise<void>((resolve) => this.#queue.push(resolve));
  }

  give(): void {
    const next = this.#queue.shift();
    if (next === undefined) this.#held = false;
    else next();
  }
}

/**
 * Kysely's SQLite driver, with the connection's lock kept here rather than by Kysely: a use of
 * the connection gives it up first, then waits until what it wrote or read is on disk
 * (NodeSqliteDatabase.flushed). The next transaction runs during that sync, and many wait on one.
 */
class SyncedSqliteDriver implements Driver {
  readonly #inner: Driver;
  readonly #database: NodeSqliteDatabase;
  readonly #turns = new Turns();

  constructor(inner: Driver, database: NodeSqliteDatabase) {
    this.#inner = inner;
    this.#database = database;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#turns.take();
    return this.#inner.acquireConnection();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.#inner.releaseConnection(connection);
    this.#turns.give();
    await this.#database.flushed();
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(connection);
  }

  savepoint: Driver['savepoint'] = (...args) => this.#inner.savepoint!(...args);
  rollbackToSavepoint: Driver['rollbackToSavepoint'] = (...args) => this.#inner.rollbackToSavepoint!(...args);
  releaseSavepoint: Driver['releaseSavepoint'] = (...args) => this.#inner.releaseSavepoint!(...args);

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}

/** The lock is the driver's (above), so Kysely is told it need not keep one. */
class SyncedSqliteAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

/** SQLite through node:sqlite, every use answered only once its data is on disk. */
export class SyncedSqliteDialect extends SqliteDialect {
  readonly #database: NodeSqliteDatabase;

  constructor(database: NodeSqliteDatabase) {
    super({ database });
    this.#database = database;
  }

  override createDriver(): Driver {
    return new SyncedSqliteDriver(super.createDriver(), this.#database);
  }

  override createAdapter(): SqliteAdapter {
    return new SyncedSqliteAdapter();
  }
}
