import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { Notifier } from '../../src/workers/notifier.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../support/databases.ts';
import { call } from '../support/http.ts';
import { type ServiceProcess, startServiceProcess } from '../support/process.ts';
import { TEST_ENCRYPTION_KEY } from '../support/server.ts';
import {
  deliveryBody,
  deliveryRows,
  emitStatus,
  insertMessage,
  liveSecrets,
  setCallbackUrl,
  type Target,
  waitUntil,
} from '../support/webhookEvents.ts';
import { ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// Deliveries live in the database from the moment their status change commits. SIGKILL the
// service while some are waiting for their first attempt, some wait for a retry and some are in
// flight; a new process on the same database delivers every one of them.

const EVENTS = 24;

for (const kind of databaseKinds()) {
  describe(`webhook durability (${kind})`, () => {
    let database: TestDatabase;
    let local: Database;
    let target: Target;
    let receiver: WebhookReceiver;
    const services: ServiceProcess[] = [];

    function env(): Record<string, string> {
      return {
        SVC_DATABASE_URL: database.url,
        SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        SVC_ALLOW_PRIVATE_CALLBACKS: 'true',
        SVC_WEBHOOK_TIMEOUT_MS: '1000',
        SVC_WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms,200ms,200ms',
      };
    }

    before(async () => {
      database = await createTestDatabase(kind);
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      for (const service of services) await service.stop('SIGKILL');
      await local?.close();
      await receiver.close();
      await database.drop();
    });

    it('delivers every event at least once after a SIGKILL mid-delivery', async (t) => {
      const first = await startServiceProcess(env());
      services.push(first);
      const created = await call(first.url, 'POST', '/v1/projects', {
        body: { name: 'durable', ownerEmail: 'owner@example.com' },
      });
      assert.equal(created.status, 200);
      const projectId: string = created.body.projectId;

      // This process writes the events as the service's own status changes would, in one
      // transaction each (on PostgreSQL its NOTIFY wakes the service at once).
      local = openDatabase(database.url, { poolSize: 2 });
      target = { database: local, notifier: new Notifier(local, pino({ level: 'silent' })) };
      await setCallbackUrl(target, projectId, receiver.url);
      receiver.secrets = await liveSecrets(target, projectId);
      // First attempt fails, the second hangs (in flight when the service dies), then 2xx. The
      // failure is a 4xx: a prompt answer, which does not open the receiver's circuit (every
      // delivery failing with a 5xx would hold the others back, one probe at a time).
      receiver.respond = (_arrival, nth) => (nth === 1 ? { status: 409 } : nth === 2 ? { hang: true } : { status: 200 });

      const eventIds = new Set<string>();
      for (let i = 0; i < EVENTS; i++) {
        const message = await insertMessage(target, projectId);
        const { eventId, enqueued } = await emitStatus(target, message, i % 2 === 0 ? 'SENT' : 'FAILED', {
          error: i % 2 === 0 ? null : { code: '131026', title: 'Undeliverable', message: 'Gone.' },
        });
        assert.equal(enqueued, true);
        eventIds.add(eventId);
      }
      await receiver.waitFor(
        (arrivals) => arrivals.filter((arrival) => arrival.attempt === 2).length >= 4,
        20_000,
      );
      assert.equal(await first.stop('SIGKILL'), 'SIGKILL');

      const before = await deliveryRows(target, projectId);
      assert.equal(before.length, EVENTS);
      const pendingAtKill = before.filter((row) => row.status === 'pending');
      assert.ok(pendingAtKill.length > 0, 'some deliveries were still pending at the kill');
      const leased = (row: (typeof before)[number]) => row.lease_expires_at !== null && row.lease_expires_at > Date.now();
      const states = {
        inFlight: pendingAtKill.filter(leased).length,
        neverAttempted: pendingAtKill.filter((row) => !leased(row) && row.attempt_count === 0).length,
        waitingForRetry: pendingAtKill.filter((row) => !leased(row) && row.attempt_count > 0).length,
      };
      assert.ok(states.inFlight > 0, 'some attempts were in flight at the kill');

      receiver.respond = ok;
      const second = await startServiceProcess(env());
      services.push(second);
      await waitUntil(
        async () => (await deliveryRows(target, projectId)).every((row) => row.status === 'succeeded'),
        30_000,
        'every delivery succeeded after the restart',
      );

      const after = await deliveryRows(target, projectId);
      assert.deepEqual(new Set(after.map((row) => row.event_id)), eventIds, 'no event lost, none added');
      for (const row of after) {
        const arrivals = receiver.arrivalsFor(row.id);
        assert.ok(
          arrivals.some((arrival) => arrival.answeredWith !== undefined && arrival.answeredWith < 300),
          `delivery ${row.id} acknowledged at least once`,
        );
        const body = await deliveryBody(target, row);
        for (const arrival of arrivals) {
          assert.deepEqual(arrival.verified, [true]);
          assert.equal(arrival.body, body);
        }
      }
      assert.equal(await second.stop('SIGTERM'), 0, 'a clean stop exits 0');
      t.diagnostic(`pending at SIGKILL: ${JSON.stringify(states)}`);
    });
  });
}
