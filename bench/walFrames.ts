// Which of svc's transactions write how many WAL frames (pages), and how long its statements take:
// loaded into svc with `BENCH_SVC_NODE_OPTIONS="--import <bench>/walFrames.ts"` and
// BENCH_WAL_TRACE_DIR set. Each transaction of a connection is named by its first statement after
// `begin` (its first 70 characters); at its commit, the frames it added to the WAL are read from
// the wal-index header (mxFrame, byte 16 of the -shm file: a restart of the WAL sets it back, then
// the commit's frames are all of it). Statement time is summed by statement text. On SIGUSR2 the
// totals so far are appended to <dir>/walframes-<pid>.jsonl as one JSON line (the driver,
// bench/spreadBurst.ts, takes one before and one after a burst and prints the difference).
import { appendFileSync, closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, StatementSync } from 'node:sqlite';

const dir = process.env.BENCH_WAL_TRACE_DIR;
if (dir) trace(join(dir, `walframes-${process.pid}.jsonl`));

interface Totals {
  /** By transaction name: commits, frames. */
  transactions: Record<string, { commits: number; frames: number }>;
  /** By statement text: calls, ms. */
  statements: Record<string, { calls: number; ms: number }>;
  /** Commits that ran SQLite's automatic checkpoint (nBackfill moved), and the others: count, ms, frames copied; the longest (since start). */
  checkpoints: { commits: number; ms: number; copied: number; otherCommits: number; otherMs: number; maxMs: number };
}

function trace(file: string): void {
  const totals: Totals = { transactions: {}, statements: {}, checkpoints: { commits: 0, ms: 0, copied: 0, otherCommits: 0, otherMs: 0, maxMs: 0 } };
  const statementDb = new WeakMap<StatementSync, DatabaseSync>();
  const statementText = new WeakMap<StatementSync, string>();
  const open = new WeakMap<DatabaseSync, { name: string | undefined; shm: string | undefined }>();
  const header = Buffer.alloc(100);
  /** The wal-index header's mxFrame (frames in the WAL) and nBackfill (frames a checkpoint copied). */
  const walState = (shm: string | undefined): { frames: number; backfilled: number } => {
    if (shm === undefined) return { frames: 0, backfilled: 0 };
    try {
      const fd = openSync(shm, 'r');
      readSync(fd, header, 0, 100, 0);
      closeSync(fd);
      return { frames: header.readUInt32LE(16), backfilled: header.readUInt32LE(96) };
    } catch {
      return { frames: 0, backfilled: 0 };
    }
  };
  const mxFrame = (shm: string | undefined) => walState(shm).frames;
  const stateOf = (db: DatabaseSync) => {
    let state = open.get(db);
    if (state === undefined) {
      const location = db.location();
      state = { name: undefined, shm: location ? `${location}-shm` : undefined };
      open.set(db, state);
    }
    return state;
  };
  const prepare = DatabaseSync.prototype.prepare;
  DatabaseSync.prototype.prepare = function (this: DatabaseSync, text: string, ...rest: unknown[]) {
    const statement = (prepare as (...args: unknown[]) => StatementSync).call(this, text, ...rest);
    statementDb.set(statement, this);
    statementText.set(statement, text.replace(/\s+/g, ' ').trim());
    return statement;
  } as typeof prepare;
  for (const method of ['run', 'all', 'get', 'iterate'] as const) {
    const original = StatementSync.prototype[method] as (...args: unknown[]) => unknown;
    (StatementSync.prototype as unknown as Record<string, unknown>)[method] = function (this: StatementSync, ...args: unknown[]) {
      const text = statementText.get(this) ?? '?';
      const db = statementDb.get(this);
      const lower = text.slice(0, 8).toLowerCase();
      const state = db && stateOf(db);
      const isCommit = lower === 'commit';
      // A write outside a transaction commits by itself.
      const autocommit = !isCommit && state !== undefined && db !== undefined && !db.isTransaction && /^(insert|update|delete|with|replace)/.test(lower);
      const beforeState = (isCommit || autocommit) && state ? walState(state.shm) : { frames: 0, backfilled: 0 };
      const before = beforeState.frames;
      const at = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        const ms = performance.now() - at;
        const key = text.slice(0, 160);
        const entry = (totals.statements[key] ??= { calls: 0, ms: 0 });
        entry.calls++;
        entry.ms += ms;
        if (state && (isCommit || autocommit)) {
          const { backfilled } = walState(state.shm);
          if (backfilled > beforeState.backfilled) {
            totals.checkpoints.commits++;
            totals.checkpoints.ms += ms;
            totals.checkpoints.maxMs = Math.max(totals.checkpoints.maxMs, ms);
            totals.checkpoints.copied += backfilled - beforeState.backfilled;
          } else {
            totals.checkpoints.otherCommits++;
            totals.checkpoints.otherMs += ms;
          }
        }
        if (state && autocommit) {
          const after = mxFrame(state.shm);
          const transaction = (totals.transactions[`(autocommit) ${text.slice(0, 70)}`] ??= { commits: 0, frames: 0 });
          transaction.commits++;
          transaction.frames += after >= before ? after - before : after;
        } else if (state) {
          if (lower.startsWith('begin')) state.name = undefined;
          else if (isCommit || lower.startsWith('rollback')) {
            if (isCommit) {
              const after = mxFrame(state.shm);
              const transaction = (totals.transactions[state.name ?? '(none)'] ??= { commits: 0, frames: 0 });
              transaction.commits++;
              transaction.frames += after >= before ? after - before : after;
            }
            state.name = undefined;
          } else state.name ??= text.slice(0, 70);
        }
      }
    };
  }
  process.on('SIGUSR2', () => appendFileSync(file, JSON.stringify({ t: Date.now(), ...totals }) + '\n'));
}
