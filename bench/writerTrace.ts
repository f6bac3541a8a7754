// What runs on svc's main thread during its event-loop stalls (issue 24, fourth pass): loaded
// into svc with `BENCH_SVC_NODE_OPTIONS="--import <bench>/writerTrace.ts"` and BENCH_WRITER_TRACE_DIR
// set, it times every node:sqlite call (≥ 0.5 ms), tells a commit that ran SQLite's automatic
// checkpoint (the database file's mtime moved: in WAL mode only a checkpoint writes it), records
// garbage collections and the loop's stalls (the same 10 ms ticker as loopStalls.ts), and writes
// them to <dir>/trace-<pid> as JSON lines. `node bench/writerTraceReport.ts <dir>` makes the table.
// The mtime test assumes no other connection checkpoints the file meanwhile (another process's or
// a checkpoint thread's checkpoint during a commit would flag that commit too).
import { appendFileSync, closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { DatabaseSync, StatementSync } from 'node:sqlite';

const dir = process.env.BENCH_WRITER_TRACE_DIR;
if (dir) trace(join(dir, `trace-${process.pid}`));

function trace(file: string): void {
  const MIN_MS = 0.5;
  let buffer: string[] = [];
  const flush = () => {
    if (buffer.length === 0) return;
    appendFileSync(file, buffer.join('\n') + '\n');
    buffer = [];
  };
  const record = (entry: Record<string, unknown>) => buffer.push(JSON.stringify(entry));
  // The WAL file's size each second (the first file connection's: svc's writer).
  let walPath: string | undefined;
  setInterval(() => {
    if (walPath) {
      try {
        // The wal-index (-shm): frames in the WAL (mxFrame, byte 16) and copied (nBackfill, byte 96).
        const header = Buffer.alloc(100);
        const fd = openSync(walPath.replace(/-wal$/, '-shm'), 'r');
        readSync(fd, header, 0, 100, 0);
        closeSync(fd);
        record({ t: Date.now(), ms: 0, kind: 'wal', bytes: statSync(walPath).size, frames: header.readUInt32LE(16), copied: header.readUInt32LE(96) });
      } catch {
        // not there yet
      }
    }
    flush();
  }, 1000).unref();
  process.on('exit', flush);

  // Every SQLite call's time since the last tick, small ones included.
  let sqlMs = 0;
  let sqlCalls = 0;
  let bySql = new Map<string, { n: number; ms: number }>();
  const tally = (sql: string, ms: number) => {
    const key = sql.replace(/\s+/g, ' ').trim().slice(0, 60);
    const entry = bySql.get(key) ?? { n: 0, ms: 0 };
    entry.n++;
    entry.ms += ms;
    bySql.set(key, entry);
  };
  const connections = new WeakMap<object, number>();
  const statementsOf = new WeakMap<object, { db: number; sql: string; path: string | null }>();
  let nextConnection = 0;
  const connectionOf = (db: DatabaseSync) => {
    let id = connections.get(db);
    if (id === undefined) connections.set(db, (id = nextConnection++));
    return id;
  };
  const mtimeOf = (path: string | null) => {
    if (!path || path === ':memory:') return 0;
    try {
      return statSync(path).mtimeMs;
    } catch {
      return 0;
    }
  };

  const timed = <A extends unknown[], R>(
    kind: string,
    describe: (self: object) => { db: number; sql: string; path: string | null } | undefined,
    original: (...args: A) => R,
  ) =>
    function (this: object, ...args: A): R {
      const info = describe(this);
      const isCommit = info !== undefined && /^\s*commit\b/i.test(info.sql);
      const before = isCommit ? mtimeOf(info.path) : 0;
      const start = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        const ms = performance.now() - start;
        sqlMs += ms;
        sqlCalls++;
        tally(info?.sql ?? '', ms);
        const checkpointed = isCommit && mtimeOf(info.path) !== before;
        if (ms >= MIN_MS || checkpointed) {
          record({ t: performance.timeOrigin + start, ms: +ms.toFixed(2), kind, db: info?.db, sql: info?.sql.slice(0, 80), ...(checkpointed && { checkpoint: true }) });
        }
      }
    };

  const prepare = DatabaseSync.prototype.prepare;
  DatabaseSync.prototype.prepare = function (this: DatabaseSync, sql: string, ...rest: unknown[]) {
    const statement = (prepare as (...args: unknown[]) => StatementSync).call(this, sql, ...rest);
    const path = this.location();
    walPath ??= path ? `${path}-wal` : undefined;
    statementsOf.set(statement, { db: connectionOf(this), sql, path });
    return statement;
  } as typeof prepare;
  const exec = DatabaseSync.prototype.exec;
  DatabaseSync.prototype.exec = function (this: DatabaseSync, sql: string) {
    const path = this.location();
    const before = /wal_checkpoint|incremental_vacuum/i.test(sql) ? mtimeOf(path) : 0;
    const start = performance.now();
    try {
      return exec.call(this, sql);
    } finally {
      const ms = performance.now() - start;
      sqlMs += ms;
      sqlCalls++;
      tally(sql, ms);
      if (ms >= MIN_MS) record({ t: performance.timeOrigin + start, ms: +ms.toFixed(2), kind: 'exec', db: connectionOf(this), sql: sql.slice(0, 80), ...(before && mtimeOf(path) !== before && { checkpoint: true }) });
    }
  } as typeof exec;
  for (const method of ['run', 'all', 'get', 'iterate'] as const) {
    const original = StatementSync.prototype[method] as (...args: unknown[]) => unknown;
    (StatementSync.prototype as unknown as Record<string, unknown>)[method] = timed(method, (self) => statementsOf.get(self), original);
  }

  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration >= MIN_MS) record({ t: performance.timeOrigin + entry.startTime, ms: +entry.duration.toFixed(2), kind: 'gc' });
    }
  }).observe({ entryTypes: ['gc'] });

  let last = Date.now();
  setInterval(() => {
    const now = Date.now();
    const late = now - last - 10;
    // mono: the monotonic clock in µs, as a .cpuprofile's timestamps (to find the stall's samples).
    if (late >= 20) record({ t: last + 10, ms: late, kind: 'stall', mono: Number(process.hrtime.bigint() / 1000n), sqlMs: +sqlMs.toFixed(1), sqlCalls, bySql: [...bySql].sort((a, b) => b[1].ms - a[1].ms).slice(0, 6).map(([sql, { n, ms }]) => `${n}× ${ms.toFixed(1)} ${sql}`) });
    bySql = new Map();
    sqlMs = 0;
    sqlCalls = 0;
    last = now;
  }, 10).unref();
}
