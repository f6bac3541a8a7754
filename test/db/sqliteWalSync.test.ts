import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Kysely, sql } from 'kysely';
import { isUniqueViolation } from '../../src/db/constraints.ts';
import { openDatabase } from '../../src/db/database.ts';
import { openSqlite } from '../../src/db/sqlite.ts';
import { SqliteCheckpointer } from '../../src/db/sqliteCheckpointer.ts';
import { SyncedSqliteDialect } from '../../src/db/sqliteDriver.ts';
import { WalSync } from '../../src/db/walSync.ts';

// The SQLite write path: commits are not synced by SQLite on the event loop; WalSync syncs the WAL
// on libuv's thread pool and every use of a connection is answered only after a sync that covers
// what it wrote or read. The order is asserted on recorded events, never on time.

interface Rows {
  t: { id: string; v: number | null; note: string | null };
}

/** fdatasync replaced by one the test completes (or fails) itself, recording each step. */
function heldSyncs(events: string[]) {
  const pending: ((error: Error | null) => void)[] = [];
  return {
    datasync: (_fd: number, done: (error: Error | null) => void) => {
      events.push('sync start');
      pending.push((error) => {
        events.push(error === null ? 'sync end' : 'sync failed');
        done(error);
      });
    },
    get waiting() {
      return pending.length;
    },
    finish(error: Error | null = null) {
      const next = pending.shift();
      assert.ok(next, 'a sync is running');
      next(error);
    },
  };
}

/** Turns of the event loop until `condition` holds (a bounded number: never a timing). */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 1000 && !condition(); turn++) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(condition(), what);
}

function settled<T>(promise: Promise<T>): { done: () => boolean; promise: Promise<T> } {
  let done = false;
  const tracked = promise.finally(() => (done = true));
  tracked.catch(() => {});
  return { done: () => done, promise: tracked };
}

async function withFile(work: (path: string) => Promise<void>): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'svc-walsync-'));
  try {
    await work(join(folder, 'svc.db'));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

function open(path: string, events: string[], datasync?: NonNullable<ConstructorParameters<typeof WalSync>[1]>['datasync']) {
  const sync = new WalSync(path, datasync === undefined ? {} : { datasync });
  const writer = new Kysely<Rows>({ dialect: new SyncedSqliteDialect(openSqlite(path, { sync, written: () => events.push('commit') })) });
  const reader = new Kysely<Rows>({ dialect: new SyncedSqliteDialect(openSqlite(path, { sync })) });
  return {
    writer,
    reader,
    close: async () => {
      await reader.destroy();
      await writer.destroy();
      await sync.close();
    },
  };
}

async function createTable(path: string): Promise<void> {
  const events: string[] = [];
  const { writer, close } = open(path, events);
  await sql`create table t (id text primary key, v integer unique, note text)`.execute(writer);
  await close();
}

describe('SQLite writes synced off the event loop (WalSync)', () => {
  it('answers a write only after a sync that started after its commit', async () => {
    await withFile(async (path) => {
      await createTable(path);
      const events: string[] = [];
      const syncs = heldSyncs(events);
      const { writer, close } = open(path, events, syncs.datasync);
      const write = settled(writer.insertInto('t').values({ id: 'a', v: 1, note: null }).execute().then(() => events.push('answered')));
      await until(() => syncs.waiting === 1, 'the sync started');
      assert.equal(write.done(), false, 'not answered while its sync runs');
      syncs.finish();
      await write.promise;
      assert.deepEqual(events, ['commit', 'sync start', 'sync end', 'answered']);
      await close();
    });
  });

  it('commits made while a sync runs share the next one; the connection is free meanwhile', async () => {
    await withFile(async (path) => {
      await createTable(path);
      const events: string[] = [];
      const syncs = heldSyncs(events);
      const { writer, close } = open(path, events, syncs.datasync);
      const first = settled(writer.insertInto('t').values({ id: 'a', v: 1, note: null }).execute());
      await until(() => syncs.waiting === 1, 'the first sync started');
      // The first write is still waiting for its sync, yet these commit (the lock is not held).
      const later = ['b', 'c'].map((id, i) =>
        settled(writer.transaction().execute((trx) => trx.insertInto('t').values({ id, v: i + 2, note: null }).execute())),
      );
      await until(() => events.filter((event) => event === 'commit').length === 3, 'both later writes committed');
      syncs.finish();
      await first.promise;
      await until(() => syncs.waiting === 1, 'the second sync started');
      assert.deepEqual(later.map((write) => write.done()), [false, false], 'they need a sync that started after their commits');
      syncs.finish();
      await Promise.all(later.map((write) => write.promise));
      assert.deepEqual(events, ['commit', 'sync start', 'commit', 'commit', 'sync end', 'sync start', 'sync end']);
      await close();
    });
  });

  it('a read that saw a commit not yet synced waits for it, whoever made the commit', async () => {
    await withFile(async (path) => {
      await createTable(path);
      const events: string[] = [];
      const syncs = heldSyncs(events);
      const { writer, reader, close } = open(path, events, syncs.datasync);
      // Another process's connection (its own WalSync, synced at once) commits a row.
      const otherEvents: string[] = [];
      const other = open(path, otherEvents);
      await other.writer.insertInto('t').values({ id: 'other', v: 9, note: null }).execute();
      await other.close();
      const read = settled(reader.selectFrom('t').select('id').execute());
      await until(() => syncs.waiting === 1, 'the reader asked for a sync');
      assert.equal(read.done(), false);
      syncs.finish();
      assert.deepEqual((await read.promise).map((row) => row.id), ['other']);

      // This process's own write, not yet synced, seen by the reader: the read waits for a sync
      // that started after it, not the one already running.
      const write = settled(writer.insertInto('t').values({ id: 'mine', v: 1, note: null }).execute());
      await until(() => syncs.waiting === 1, 'the write\'s sync started');
      const seen = settled(reader.selectFrom('t').select('id').orderBy('id').execute());
      await until(() => events.includes('commit'), 'committed');
      syncs.finish();
      await write.promise;
      await until(() => syncs.waiting === 1, 'the read\'s sync started');
      assert.equal(seen.done(), false);
      syncs.finish();
      assert.deepEqual((await seen.promise).map((row) => row.id), ['mine', 'other']);
      await close();
    });
  });

  it('a failed sync fails the writes it covered, and the next ones go on', async () => {
    await withFile(async (path) => {
      await createTable(path);
      const events: string[] = [];
      const syncs = heldSyncs(events);
      const { writer, close } = open(path, events, syncs.datasync);
      const write = settled(writer.insertInto('t').values({ id: 'a', v: 1, note: null }).execute());
      await until(() => syncs.waiting === 1, 'the sync started');
      syncs.finish(new Error('EIO: i/o error, fdatasync'));
      await assert.rejects(write.promise, /EIO/);
      const next = settled(writer.insertInto('t').values({ id: 'b', v: 2, note: null }).execute());
      await until(() => syncs.waiting === 1, 'the next sync started');
      syncs.finish();
      await next.promise;
      await close();
    });
  });

  it('keeps the driver\'s errors (errcode for constraints.ts), rolls back, and the connection goes on', async () => {
    await withFile(async (path) => {
      await createTable(path);
      const { writer, close } = open(path, []);
      await writer.insertInto('t').values({ id: 'a', v: 1, note: null }).execute();
      const duplicate = await writer
        .insertInto('t')
        .values({ id: 'b', v: 1, note: null })
        .execute()
        .then(() => undefined, (error: unknown) => error);
      assert.equal((duplicate as { errcode?: number }).errcode, 2067);
      assert.ok(isUniqueViolation(duplicate, { constraint: 'x', table: 't', columns: ['v'] }));

      await assert.rejects(
        writer.transaction().execute(async (trx) => {
          await trx.insertInto('t').values({ id: 'c', v: 3, note: null }).execute();
          throw new Error('changed my mind');
        }),
        /changed my mind/,
      );
      const rows = await writer.selectFrom('t').select(['id', 'v']).orderBy('id').execute();
      assert.deepEqual(rows.map((row) => ({ ...row })), [{ id: 'a', v: 1 }]);
      const result = await writer.insertInto('t').values({ id: 'd', v: 4, note: null }).executeTakeFirst();
      assert.equal(result.numInsertedOrUpdatedRows, 1n);
      await close();
    });
  });

  it('close waits for the syncs asked for; what was answered is in the file when it is opened again', async () => {
    await withFile(async (path) => {
      const database = openDatabase(`sqlite:${path}`, { poolSize: 1 });
      await sql`create table t (id text primary key, v integer, note text)`.execute(database.db);
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          database.db.insertInto('t' as never).values({ id: `r${i}`, v: i, note: null } as never).execute(),
        ),
      );
      await database.close();
      const again = openDatabase(`sqlite:${path}`, { poolSize: 1 });
      const rows = await sql<{ n: number }>`select count(*) as n from t`.execute(again.reader);
      assert.equal(rows.rows[0]!.n, 20);
      await again.close();
    });
  });

  it('checkpoints in its thread and, with the writer held, lets a long WAL start over', async () => {
    await withFile(async (path) => {
      await createTable(path);
      const events: string[] = [];
      const { writer, close } = open(path, events);
      const checkpointer = new SqliteCheckpointer(path, (work) => writer.connection().execute(() => work()));
      const walSequence = () => readFileSync(`${path}-wal`).readUInt32BE(12);
      const note = 'x'.repeat(3000);
      // Over 1,000 pages of WAL (SQLite's own checkpoint size): the held pass runs.
      for (let batch = 0; batch < 12; batch++) {
        await writer.transaction().execute((trx) =>
          trx.insertInto('t').values(Array.from({ length: 100 }, (_, i) => ({ id: `${batch}-${i}`, v: batch * 100 + i, note }))).execute(),
        );
      }
      const before = walSequence();
      const result = await checkpointer.checkpoint();
      assert.ok(result.log >= 1000, `${result.log} frames`);
      assert.equal(result.checkpointed, result.log, 'every frame copied into the file');
      await writer.insertInto('t').values({ id: 'after', v: -1, note: null }).execute();
      assert.equal(walSequence(), before + 1, 'the next commit started the WAL over');
      await checkpointer.close();
      await close();
      const again = open(path, []);
      const count = await again.reader.selectFrom('t').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(count.n, 1201);
      await again.close();
    });
  });
});
