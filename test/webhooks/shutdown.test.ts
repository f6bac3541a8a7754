import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { deliveryAttempts, deliveryRows, emitStatus, insertMessage, liveSecrets, setCallbackUrl, waitUntil } from '../support/webhookEvents.ts';
import { hang, ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';
import { deliveryOf } from '../../src/db/deliveryIds.ts';

// Stopping the service cuts the attempts in flight short: each is recorded as interrupted and is
// due again at once, so the next process to run sends it without waiting for a lease or a retry.

const EVENTS = 3;

for (const kind of databaseKinds()) {
  describe(`webhook delivery at shutdown (${kind})`, () => {
    let database: TestDatabase;
    let receiver: WebhookReceiver;
    const servers: TestServer[] = [];

    before(async () => {
      database = await createTestDatabase(kind);
      receiver = await startWebhookReceiver(hang);
    });
    after(async () => {
      for (const server of servers) await server.close().catch(() => {});
      await receiver.close();
      await database.drop();
    });

    async function start(): Promise<TestServer> {
      const server = await startTestServer(kind, { database, env: { SVC_WEBHOOK_TIMEOUT_MS: '60000' } });
      servers.push(server);
      return server;
    }

    it('records attempts in flight as interrupted, due at once, and the next start sends them', async () => {
      const first = await start();
      const { projectId } = await first.createProject();
      await setCallbackUrl(first.app, projectId, receiver.url);
      receiver.secrets = await liveSecrets(first.app, projectId);
      for (let i = 0; i < EVENTS; i++) await emitStatus(first.app, await insertMessage(first.app, projectId), 'SENT');
      await receiver.waitFor((arrivals) => arrivals.length === EVENTS);

      await first.close();
      const stopped = Date.now();
      const local = openDatabase(database.url, { poolSize: 1 });
      let rows;
      try {
        rows = (await local.db.selectFrom('webhook_deliveries').selectAll().where('project_id', '=', projectId).execute()).map(deliveryOf);
        assert.equal(rows.length, EVENTS);
        for (const row of rows) {
          assert.equal(row.status, 'pending');
          assert.equal(row.attempt_count, 1);
          assert.ok(row.due_at! <= stopped, 'due again at once, not at the end of a lease');
          const attempts = await deliveryAttempts({ database: local }, row.id);
          assert.equal(attempts.length, 1);
          assert.match(attempts[0]!.error ?? '', /interrupted/);
          assert.equal(attempts[0]!.status_code, null);
        }
      } finally {
        await local.close();
      }

      const second = await start();
      receiver.respond = ok;
      await waitUntil(
        async () => (await deliveryRows(second.app, projectId)).every((row) => row.status === 'succeeded'),
        15_000,
        'delivered after the restart',
      );
      for (const row of rows) {
        assert.deepEqual(
          receiver.arrivalsFor(row.id).map((arrival) => arrival.attempt),
          [1, 2],
        );
      }
    });
  });
}
