// The messages between the main thread and the SQLite writer thread (sqliteWriter.ts).

export type WriterRequest =
  | { id: number; op: 'query'; sql: string; parameters: readonly unknown[] }
  /** One statement run once per set of parameters (rows to insert, updates): one message for all. */
  | { id: number; op: 'each'; sql: string; parameterSets: readonly (readonly unknown[])[] }
  /** Database.withoutSync: commits unsynced (false) until set back (true). */
  | { id: number; op: 'syncing'; syncing: boolean }
  | { id: number; op: 'close' };

export interface WriterReply {
  id: number;
  /** A statement that returns rows. */
  rows?: unknown[];
  /** A statement that does not. */
  changes?: number;
  lastInsertRowid?: number | bigint;
  /** What the error thrown had that callers read (constraints.ts reads errcode and message). */
  error?: { message: string; code?: string; errcode?: number; errstr?: string };
}
