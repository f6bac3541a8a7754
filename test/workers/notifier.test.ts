import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { openDatabase } from '../../src/db/database.ts';
import { Notifier } from '../../src/workers/notifier.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';

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
});
