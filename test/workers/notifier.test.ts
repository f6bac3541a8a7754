import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { openDatabase } from '../../src/db/database.ts';
import { Notifier } from '../../src/workers/notifier.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';
import { until } from '../support/until.ts';

const silent = pino({ level: 'silent' });

function nextWake(notifier: Notifier, channel: 'messages' | 'webhooks'): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${channel} wake-up within 10 s`)), 10_000);
    notifier.on(channel, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

for (const kind of databaseKinds()) {
  describe(`notifier (${kind})`, () => {
    it('wakes this process’s workers', async () => {
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      const notifier = new Notifier(database, silent);
      try {
        const woken = nextWake(notifier, 'messages');
        notifier.wakeLocal('messages');
        await woken;
      } finally {
        await notifier.close();
        await database.close();
      }
    });
  });
}

describe('notifier across processes (postgres)', { skip: !process.env.SVC_TEST_POSTGRES_URL }, () => {
  it('a NOTIFY committed by one process wakes another’s listener, only after the commit', async () => {
    const testDb = await createTestDatabase('postgres');
    const api = openDatabase(testDb.url, { poolSize: 2 });
    const worker = openDatabase(testDb.url, { poolSize: 2 });
    const apiNotifier = new Notifier(api, silent);
    const workerNotifier = new Notifier(worker, silent);
    try {
      await workerNotifier.listen();
      let woken = false;
      const wake = nextWake(workerNotifier, 'webhooks').then(() => {
        woken = true;
      });
      await api.db.transaction().execute(async (trx) => {
        await apiNotifier.notifyInTransaction(trx, 'webhooks');
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(woken, false, 'not before the commit');
      });
      await wake;
    } finally {
      await apiNotifier.close();
      await workerNotifier.close();
      await api.close();
      await worker.close();
    }
  });

  it('a listener given back by close() may then lose its connection: nothing thrown, nothing logged', async () => {
    // A database of its own, so its one LISTEN connection is told apart from other tests'.
    const testDb = await createTestDatabase('postgres', { migrated: true });
    const database = openDatabase(testDb.url, { poolSize: 2 });
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    const notifier = new Notifier(database, logger);
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    const admin = openDatabase(process.env.SVC_TEST_POSTGRES_URL!, { poolSize: 1 });
    try {
      await notifier.listen();
      const listener = await sql<{ pid: number }>`
        select pid from pg_stat_activity
        where datname = current_database() and query like 'LISTEN %' and pid <> pg_backend_pid()`.execute(database.db);
      const pids = listener.rows.map((row) => row.pid);
      assert.equal(pids.length, 1);
      await notifier.close(); // the client goes back to the pool, which is still open
      // Its connection dies (a restart, a failover, a dropped database): the pool's to handle.
      await sql`select pg_terminate_backend(${pids[0]!})`.execute(admin.db);
      await until('the listener’s backend gone', async () => {
        const left = await sql`select 1 from pg_stat_activity where pid = ${pids[0]!}`.execute(admin.db);
        return left.rows.length === 0;
      });
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(uncaught, []);
      assert.deepEqual(warnings, []);
    } finally {
      process.off('uncaughtException', onUncaught);
      await database.close().catch(() => {});
      await admin.close();
      await testDb.drop();
    }
  });
});
