import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { WriterReply, WriterRequest } from './sqliteWriterProtocol.ts';

/**
 * How long the main thread may wait, blocked, for a statement's answer before it lets the event
 * loop run and takes the answer when it comes. Most statements take a few microseconds; waiting
 * for them keeps a transaction as short as when they ran here (no request handled between its
 * statements while it holds the writer). A synced commit's fsync or a long statement (a purge
 * step) is never waited for this way beyond this bound.
 */
const BLOCKING_WAIT_MS = 2;

type Request = WriterRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

interface Pending {
  resolve: (reply: WriterReply) => void;
  reject: (error: unknown) => void;
}

/**
 * svc's one SQLite writer connection, owned by a thread of its own (sqliteWriterThread.ts): every
 * write statement, commit and fsync runs there, off the event loop that answers requests. The
 * main thread sends it statements in order (Kysely's connection lock keeps one transaction at a
 * time) and gets the answers back; reads on the request path keep their own connection on the
 * main thread (Database.reader: WAL lets them read beside the writer).
 */
export class SqliteWriter {
  readonly #worker: Worker;
  readonly #replies: MessagePort;
  readonly #answered: Int32Array;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #failure: Error | undefined;
  #syncing = true;

  constructor(path: string) {
    const channel = new MessageChannel();
    const answered = new SharedArrayBuffer(4);
    this.#answered = new Int32Array(answered);
    this.#replies = channel.port1;
    this.#worker = new Worker(new URL('./sqliteWriterThread.ts', import.meta.url), {
      workerData: { path, replies: channel.port2, answered },
      transferList: [channel.port2],
    });
    // The thread never keeps the process alive by itself; the reply port does while a statement
    // is in flight.
    this.#worker.unref();
    this.#replies.unref();
    this.#replies.on('message', (reply: WriterReply) => this.#settle(reply));
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', () => this.#fail(new Error('the SQLite writer thread exited')));
  }

  /** Whether commits are synced now (false inside Database.withoutSync). */
  get syncing(): boolean {
    return this.#syncing;
  }

  async execute(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    // The commit of a synced transaction waits for its fsync: never block the event loop for it.
    const blocking = !(this.#syncing && sql === 'commit');
    const reply = await this.#send({ op: 'query', sql, parameters }, blocking);
    if (reply.rows !== undefined) return { rows: reply.rows };
    return {
      rows: [],
      numAffectedRows: reply.changes === undefined ? undefined : BigInt(reply.changes),
      insertId: reply.lastInsertRowid === undefined ? undefined : BigInt(reply.lastInsertRowid),
    };
  }

  /** `sql` once per set of parameters, in one message; the rows changed in all. */
  async executeEach(sql: string, parameterSets: readonly (readonly unknown[])[]): Promise<QueryResult<unknown>> {
    const reply = await this.#send({ op: 'each', sql, parameterSets }, true);
    return { rows: [], numAffectedRows: BigInt(reply.changes ?? 0) };
  }

  async setSyncing(syncing: boolean): Promise<void> {
    await this.#send({ op: 'syncing', syncing }, true);
    this.#syncing = syncing;
  }

  async close(): Promise<void> {
    if (this.#failure === undefined) await this.#send({ op: 'close' }, false).catch(() => {});
    await this.#worker.terminate();
    this.#replies.close();
  }

  #send(request: Request, blocking: boolean): Promise<WriterReply> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const id = (this.#nextId = (this.#nextId + 1) | 0);
    const answer = new Promise<WriterReply>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    if (this.#pending.size === 1) this.#replies.ref();
    this.#worker.postMessage({ ...request, id });
    if (blocking && this.#waitBriefly(id)) this.#takeReplies();
    return answer.then((reply) => {
      if (reply.error === undefined) return reply;
      const { message, ...details } = reply.error;
      throw Object.assign(new Error(message), details);
    });
  }

  /** Blocks up to BLOCKING_WAIT_MS for the answer to `id`; whether it came. */
  #waitBriefly(id: number): boolean {
    const deadline = performance.now() + BLOCKING_WAIT_MS;
    for (;;) {
      const seen = Atomics.load(this.#answered, 0);
      // Ids and the counter wrap around together (int32): compare by difference.
      if (((seen - id) | 0) >= 0) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      Atomics.wait(this.#answered, 0, seen, left);
    }
  }

  #takeReplies(): void {
    for (let message = receiveMessageOnPort(this.#replies); message !== undefined; message = receiveMessageOnPort(this.#replies)) {
      this.#settle(message.message as WriterReply);
    }
  }

  #settle(reply: WriterReply): void {
    const pending = this.#pending.get(reply.id);
    if (pending === undefined) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#replies.unref();
    pending.resolve(reply);
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    this.#replies.unref();
  }
}

/** A compiled statement to run once per set of parameters (prepared.ts: Statement.executeEach). */
export type EachQuery = CompiledQuery & { each?: readonly (readonly unknown[])[] };

/** The adapter of Kysely instances whose statements a SqliteWriter runs (they understand EachQuery). */
export class SqliteWriterAdapter extends SqliteAdapter {}

class WriterConnection implements DatabaseConnection {
  readonly #writer: SqliteWriter;

  constructor(writer: SqliteWriter) {
    this.#writer = writer;
  }

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const { each } = compiledQuery as EachQuery;
    if (each !== undefined) return this.#writer.executeEach(compiledQuery.sql, each) as Promise<QueryResult<R>>;
    return this.#writer.execute(compiledQuery.sql, compiledQuery.parameters) as Promise<QueryResult<R>>;
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const { rows } = await this.executeQuery<R>(compiledQuery);
    for (const row of rows) yield { rows: [row] };
  }
}

class WriterDriver implements Driver {
  readonly #writer: SqliteWriter;
  readonly #connection: WriterConnection;

  constructor(writer: SqliteWriter) {
    this.#writer = writer;
    this.#connection = new WriterConnection(writer);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint "${name}"`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to "${name}"`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release "${name}"`));
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.#writer.close();
  }
}

/** Kysely's SQLite dialect with its statements run by a SqliteWriter. */
export class SqliteWriterDialect implements Dialect {
  readonly #writer: SqliteWriter;

  constructor(writer: SqliteWriter) {
    this.#writer = writer;
  }

  createDriver(): Driver {
    return new WriterDriver(this.#writer);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): SqliteAdapter {
    return new SqliteWriterAdapter();
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  createIntrospector(db: Kysely<any>): SqliteIntrospector {
    return new SqliteIntrospector(db);
  }
}
