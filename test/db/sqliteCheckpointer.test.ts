import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { WAL_AUTOCHECKPOINT_PAGES, WRITER_CACHE_KIB } from '../../src/db/sqlite.ts';
import { type CheckpointerOptions, WRITER_BACKSTOP_FRAMES } from '../../src/db/sqliteCheckpointer.ts';
import { databaseKinds } from '../support/databases.ts';

// The WAL checkpointed in a thread of its own (issue 24). Nothing here depends on speed: each
// test waits for recorded state (the checkpointer's reports, the wal-index), with a deadline
// only to fail instead of hanging.

const FRAME_BYTES = 4096 + 24;
const DEADLINE_MS = 60_000;

/** Frames in the WAL and frames copied into the database file, from the wal-index (-shm). */
function walIndex(path: string): { frames: number; copied: number } {
  const header = Buffer.alloc(100);
  const fd = openSync(`${path}-shm`, 'r');
  try {
    readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  return { frames: header.readUInt32LE(16), copied: header.readUInt32LE(96) };
}

async function until(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!(await done())) {
    if (Date.now() > deadline) assert.fail(`gave up waiting: ${what}`);
    await sleep(10);
  }
}

async function withFile(options: CheckpointerOptions, work: (database: Database, path: string) => Promise<void>): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const path = join(folder, 'svc.db');
  const database = openDatabase(`sqlite:${path}`, { poolSize: 1, checkpoints: options });
  try {
    await sql`create table pages (id integer primary key, body blob not null)`.execute(database.db);
    await work(database, path);
  } finally {
    await database.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** One transaction of `rows` rows of about a page each (≈ `rows` WAL frames). */
async function writePages(database: Database, rows: number): Promise<void> {
  await database.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows; i++) await sql`insert into pages (body) values (${randomBytes(3000)})`.execute(trx);
  });
}

/**
 * Writes `rows` pages while a reader holds an older snapshot, then has the thread checkpoint and
 * report: it cannot copy what came after that snapshot, so the WAL is left long and not all copied.
 */
async function writeBehindOldReader(database: Database, path: string, rows: number): Promise<void> {
  const checkpointer = database.checkpointer!;
  const reader = new DatabaseSync(path);
  try {
    reader.exec('begin');
    reader.prepare('select count(*) from pages').get();
    await writePages(database, rows);
    const reported = checkpointer.state.passive;
    assert.equal(checkpointer.checkpointSoon(), true);
    await until('the thread reported', () => checkpointer.state.passive > reported);
  } finally {
    reader.exec('commit');
    reader.close();
  }
}

/** The byte of the -shm that SQLite's unix VFS locks while a process has the file open ((22 + 8) * 4 + 8). */
const SHM_DMS_BYTE = 128;

/** Whether a process other than this one finds a lock on that byte of the file (fcntl F_GETLK, through Python). */
function otherProcessSeesLock(file: string, byte: number): boolean {
  const probe = [
    'import fcntl, os, struct, sys',
    'fd = os.open(sys.argv[1], os.O_RDWR)',
    "held = struct.unpack('hhqqi', fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack('hhqqi', fcntl.F_WRLCK, 0, int(sys.argv[2]), 1, 0)))[0]",
    'print(held != fcntl.F_UNLCK)',
  ].join('\n');
  const child = spawnSync('python3', ['-c', probe, file, String(byte)], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  return child.stdout.trim() === 'True';
}

async function autoCheckpoint(database: Database): Promise<number> {
  const row = (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db)).rows[0]!;
  return Number(row.wal_autocheckpoint);
}

describe('SQLite WAL checkpoints in a thread', () => {
  it('copies the WAL into the file from its thread, the writer\'s own auto-checkpoint only a backstop', async () => {
    await withFile({ checkpointAtFrames: 100, watchMs: 10, intervalMs: 10 }, async (database, path) => {
      const checkpointer = database.checkpointer!;
      assert.equal(await autoCheckpoint(database), WRITER_BACKSTOP_FRAMES);
      assert.equal(checkpointer.state.started, false, 'no thread for a short WAL');
      for (let i = 0; i < 15; i++) await writePages(database, 10);
      await until('the thread started and checkpointed', () => checkpointer.state.passive > 0);
      assert.ok(checkpointer.state.lastCheckpointed > 0, JSON.stringify(checkpointer.state));
      // Copied by the thread's connection: the writer's auto-checkpoint is only a backstop far beyond.
      assert.equal(await autoCheckpoint(database), WRITER_BACKSTOP_FRAMES);
      assert.ok(walIndex(path).copied > 0 || walIndex(path).frames < 150, JSON.stringify(walIndex(path)));
      const count = await sql<{ n: number }>`select count(*) as n from pages`.execute(database.reader);
      assert.equal(Number(count.rows[0]!.n), 150);
    });
  });

  it('keeps the WAL bounded under writes that never pause: the writer\'s backstop copies the rest and the WAL starts over', async () => {
    await withFile({ checkpointAtFrames: 50, writerBackstopFrames: 400, watchMs: 10, intervalMs: 5 }, async (database, path) => {
      const checkpointer = database.checkpointer!;
      assert.equal(await autoCheckpoint(database), 400);
      checkpointer.start();
      let written = 0;
      // Writes back to back (a turn of the event loop between transactions, as a busy service),
      // until well past the backstop several times, and the thread has checkpointed meanwhile.
      while (written < 4000 || checkpointer.state.passive === 0) {
        await writePages(database, 20);
        written += 20;
        await new Promise((resolve) => setImmediate(resolve));
        if (written > 400_000) assert.fail(`no checkpoint by the thread: ${JSON.stringify(checkpointer.state)}`);
      }
      const walBytes = statSync(`${path}-wal`).size;
      assert.ok(walBytes < 2000 * FRAME_BYTES, `WAL ${walBytes} bytes after ${written} pages written: started over`);
      assert.equal(checkpointer.state.fellBack, false);
      const count = await sql<{ n: number }>`select count(*) as n from pages`.execute(database.reader);
      assert.equal(Number(count.rows[0]!.n), written);
    });
  });

  it('pauses the writer for a checkpoint of the thread\'s when the WAL is long and not caught up, and the WAL starts over', async () => {
    // The backstop and the thread's own schedule out of the way: only the pause can copy the whole WAL.
    const options = { checkpointAtFrames: 50, writerBackstopFrames: 1_000_000, quietAtFrames: 300, watchMs: 10, intervalMs: 3_600_000 };
    await withFile(options, async (database, path) => {
      const checkpointer = database.checkpointer!;
      checkpointer.start();
      await writePages(database, 100);
      await writeBehindOldReader(database, path, 400);
      assert.ok(checkpointer.state.lastCheckpointed < walIndex(path).frames, JSON.stringify({ ...checkpointer.state, ...walIndex(path) }));
      assert.equal(checkpointer.state.quiet, 0);
      const before = walIndex(path).frames;
      assert.ok(before >= 500, `the WAL holds both writes: ${before} frames`);
      await writePages(database, 10);
      assert.equal(checkpointer.state.quiet, 1, 'the write waited for a checkpoint of the thread\'s');
      const after = walIndex(path);
      assert.ok(after.frames < 50, `the WAL started over: ${JSON.stringify(after)}`);
      // Caught up: the next writes do not wait.
      await writePages(database, 10);
      assert.equal(checkpointer.state.quiet, 1);
      const count = await sql<{ n: number }>`select count(*) as n from pages`.execute(database.reader);
      assert.equal(Number(count.rows[0]!.n), 520);
    });
  });

  it('does not hold the writer when the thread dies during the pause it asked for', async () => {
    // No time limit on the pause: only the thread's exit can end it.
    const options = { checkpointAtFrames: 50, writerBackstopFrames: 1_000_000, quietAtFrames: 100, quietLimitMs: 3_600_000, watchMs: 10, intervalMs: 3_600_000 };
    await withFile(options, async (database, path) => {
      const checkpointer = database.checkpointer!;
      checkpointer.start();
      await writePages(database, 50);
      await writeBehindOldReader(database, path, 200);
      const thread = checkpointer.thread!;
      // The write's pause asks the thread, which is gone before it answers: the write goes on.
      const write = writePages(database, 10);
      await thread.terminate();
      await write;
      await until('the fallback', () => checkpointer.state.fellBack);
      assert.equal(checkpointer.state.quiet, 0);
      const count = await sql<{ n: number }>`select count(*) as n from pages`.execute(database.reader);
      assert.equal(Number(count.rows[0]!.n), 260);
    });
  });

  it('keeps this process\'s locks on the file: its thread never closes a file of the database', async () => {
    await withFile({ checkpointAtFrames: 50, watchMs: 10, intervalMs: 5 }, async (database, path) => {
      const checkpointer = database.checkpointer!;
      checkpointer.start();
      for (let round = 0; round < 5; round++) {
        await writePages(database, 60);
        const before = checkpointer.state.passive;
        await until('the thread checkpointed', () => checkpointer.state.passive > before);
        // SQLite holds a shared lock on the -shm's DMS byte while any connection of this process has
        // the file open; POSIX drops it if the process closes any descriptor of the -shm. Without
        // it, the next process to open the file starts the shared memory over under this one's
        // mapping (a SIGBUS, seen in the scale benchmark). Asked from another process (F_GETLK).
        assert.equal(otherProcessSeesLock(`${path}-shm`, SHM_DMS_BYTE), true, `round ${round}: the DMS lock is held`);
      }
    });
  });

  it('gives the writer a page cache that outlives its transactions, and the reader SQLite\'s default', async () => {
    await withFile({}, async (database) => {
      const cacheSize = async (db: Database['db']) => Number(Object.values((await sql`pragma cache_size`.execute(db)).rows[0] as object)[0]);
      assert.equal(await cacheSize(database.db), -WRITER_CACHE_KIB);
      assert.equal(await cacheSize(database.reader), -2000);
    });
  });

  it('closes its thread when the database closes', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-test-'));
    try {
      const database = openDatabase(`sqlite:${join(folder, 'svc.db')}`, { poolSize: 1 });
      const checkpointer = database.checkpointer!;
      checkpointer.start();
      const thread = checkpointer.thread!;
      let exited = false;
      thread.once('exit', () => (exited = true));
      await database.close();
      assert.equal(exited, true);
      assert.equal(checkpointer.thread, undefined);
      assert.equal(checkpointer.state.fellBack, false);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('falls back to the writer\'s own auto-checkpoint when the thread dies', async () => {
    await withFile({ checkpointAtFrames: 100, watchMs: 10, intervalMs: 10 }, async (database, path) => {
      const checkpointer = database.checkpointer!;
      checkpointer.start();
      await checkpointer.thread!.terminate();
      await until('the fallback', () => checkpointer.state.fellBack);
      assert.equal(await autoCheckpoint(database), WAL_AUTOCHECKPOINT_PAGES);
      // SQLite's auto-checkpoint now runs at the writer's commits: past that many frames the WAL is
      // copied and, as the next commit finds it all copied, starts over.
      const pages = WAL_AUTOCHECKPOINT_PAGES + 1000;
      for (let i = 0; i < pages / 50; i++) await writePages(database, 50);
      const wal = walIndex(path);
      assert.ok(wal.copied > 0 || wal.frames < pages, `checkpointed by the writer: ${JSON.stringify(wal)}`);
      assert.equal(checkpointer.state.passive, 0);
    });
  });
});

for (const kind of databaseKinds().filter((kind) => kind === 'postgres')) {
  it(`has no checkpoint thread on ${kind}`, () => {
    const database = openDatabase(process.env.SVC_TEST_POSTGRES_URL!, { poolSize: 1 });
    assert.equal(database.checkpointer, undefined);
    return database.close();
  });
}
