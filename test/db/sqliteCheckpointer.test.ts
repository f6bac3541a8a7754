import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import type { CheckpointerOptions } from '../../src/db/sqliteCheckpointer.ts';
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

async function autoCheckpoint(database: Database): Promise<number> {
  const row = (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(database.db)).rows[0]!;
  return Number(row.wal_autocheckpoint);
}

describe('SQLite WAL checkpoints in a thread', () => {
  it('copies the WAL into the file from its thread, the writer\'s own auto-checkpoint off', async () => {
    await withFile({ checkpointAtFrames: 100, watchMs: 10, pollMs: 10 }, async (database, path) => {
      const checkpointer = database.checkpointer!;
      assert.equal(await autoCheckpoint(database), 0);
      assert.equal(checkpointer.state.started, false, 'no thread for a short WAL');
      for (let i = 0; i < 15; i++) await writePages(database, 10);
      await until('the thread started and checkpointed', () => checkpointer.state.passive > 0);
      assert.ok(checkpointer.state.lastCheckpointed > 0, JSON.stringify(checkpointer.state));
      // Copied by the thread's connection: the writer checkpoints nothing (auto-checkpoint 0).
      assert.equal(await autoCheckpoint(database), 0);
      assert.ok(walIndex(path).copied > 0 || walIndex(path).frames < 150, JSON.stringify(walIndex(path)));
      const count = await sql<{ n: number }>`select count(*) as n from pages`.execute(database.reader);
      assert.equal(Number(count.rows[0]!.n), 150);
    });
  });

  it('keeps the WAL bounded under writes that never pause: it starts over with the writer held', async () => {
    await withFile({ checkpointAtFrames: 50, holdAtFrames: 200, watchMs: 10, pollMs: 5 }, async (database, path) => {
      const checkpointer = database.checkpointer!;
      checkpointer.start();
      let written = 0;
      const deadline = Date.now() + DEADLINE_MS;
      // Writes back to back (a turn of the event loop between transactions, as a busy service),
      // until the thread has made the WAL start over three times.
      while (checkpointer.state.restarts < 3) {
        await writePages(database, 20);
        written += 20;
        await new Promise((resolve) => setImmediate(resolve));
        if (Date.now() > deadline) assert.fail(`no restarts after ${written} pages: ${JSON.stringify(checkpointer.state)}`);
      }
      const walBytes = statSync(`${path}-wal`).size;
      assert.ok(walBytes < written * FRAME_BYTES, `WAL ${walBytes} bytes after ${written} pages written: reused`);
      assert.equal(checkpointer.state.fellBack, false);
      const count = await sql<{ n: number }>`select count(*) as n from pages`.execute(database.reader);
      assert.equal(Number(count.rows[0]!.n), written);
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
    await withFile({ checkpointAtFrames: 100, watchMs: 10, pollMs: 10 }, async (database, path) => {
      const checkpointer = database.checkpointer!;
      checkpointer.start();
      await checkpointer.thread!.terminate();
      await until('the fallback', () => checkpointer.state.fellBack);
      assert.equal(await autoCheckpoint(database), 1000);
      // SQLite's auto-checkpoint (1,000 frames) now runs at the writer's commits: the WAL is copied.
      for (let i = 0; i < 60; i++) await writePages(database, 20);
      const wal = walIndex(path);
      assert.ok(wal.copied > 0 || wal.frames < 1200, `checkpointed by the writer: ${JSON.stringify(wal)}`);
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
