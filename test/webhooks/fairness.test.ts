import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_WEBHOOK_LIMITS } from '../../src/workers/webhookSlots.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import {
  deliveryRows,
  emitStatus,
  enqueueBacklog,
  insertMessage,
  liveSecrets,
  setCallbackUrl,
  type TestMessage,
  waitUntil,
} from '../support/webhookEvents.ts';
import { type Arrival, hang, ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// Webhook slots are shared fairly across projects: no project's backlog or slow receiver stands
// in front of another project's deliveries, whether they send to different receivers or to the
// same one.

const TIMEOUT_MS = 60_000;
const SLOW_PROJECTS = 10;
const BACKLOG = 100;

for (const kind of databaseKinds()) {
  describe(`webhook fairness across projects (${kind})`, () => {
    let server: TestServer;
    const receivers: WebhookReceiver[] = [];

    before(async () => {
      server = await startTestServer(kind, { env: { SVC_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
    });
    after(async () => {
      await server.close();
      for (const receiver of receivers) await receiver.close();
    });

    async function receiver(respond = ok): Promise<WebhookReceiver> {
      const started = await startWebhookReceiver(respond);
      receivers.push(started);
      return started;
    }

    async function project(name: string, url: string): Promise<string> {
      const { projectId } = await server.createProject(name);
      await setCallbackUrl(server.app, projectId, url);
      return projectId;
    }

    async function pending(projectId: string): Promise<number> {
      return (await deliveryRows(server.app, projectId)).filter((row) => row.status === 'pending').length;
    }

    it('delivers a project’s webhooks while ten hanging receivers with backlogs hold their attempts', async () => {
      // More slow receivers than the old lock-step worker had slots for (64, 8 per origin): there,
      // they held every slot until their attempts timed out.
      const slow: WebhookReceiver[] = [];
      const slowProjects: string[] = [];
      for (let i = 0; i < SLOW_PROJECTS; i++) {
        const hanging = await receiver(hang);
        slow.push(hanging);
        const projectId = await project(`hanging ${i}`, hanging.url);
        slowProjects.push(projectId);
        await enqueueBacklog(server.app, projectId, BACKLOG);
      }
      // At least as many attempts open as the old worker had slots in all.
      await waitUntil(() => slow.reduce((sum, hanging) => sum + hanging.arrivals.length, 0) >= 64);

      const fast = await receiver(ok);
      const fastProject = await project('fast', fast.url);
      fast.secrets = await liveSecrets(server.app, fastProject);
      const messages: TestMessage[] = [];
      for (let i = 0; i < 20; i++) {
        const message = await insertMessage(server.app, fastProject);
        messages.push(message);
        await emitStatus(server.app, message, i % 2 === 0 ? 'SENT' : 'FAILED', {
          error: i % 2 === 0 ? null : { code: '131026', title: 'Undeliverable', message: 'Gone.' },
        });
      }
      // Sanity bound only: long before any hanging attempt could time out.
      await fast.waitFor(
        (arrivals) => messages.every((message) => arrivals.some((arrival) => arrival.body.includes(message.id))),
        TIMEOUT_MS / 2,
      );

      for (const [i, hanging] of slow.entries()) {
        assert.ok(
          hanging.arrivals.every((arrival) => arrival.answeredAt === undefined),
          'every slow attempt is still open',
        );
        assert.ok(hanging.arrivals.length <= DEFAULT_WEBHOOK_LIMITS.maxPerOrigin, 'per-origin bound');
        assert.ok((await pending(slowProjects[i]!)) >= BACKLOG - DEFAULT_WEBHOOK_LIMITS.maxPerOrigin, 'backlog waits');
      }
      for (const arrival of fast.arrivals) assert.deepEqual(arrival.verified, [true]);
      const inFlight = slow.reduce((sum, hanging) => sum + hanging.arrivals.length, 0);
      assert.ok(inFlight <= DEFAULT_WEBHOOK_LIMITS.maxInFlight, 'overall bound');
    });

    it('takes turns between projects that send to the same receiver', async () => {
      // One receiver origin, two projects: A's deliveries take a while to answer and A has a
      // backlog; B's deliveries are served between A's, not after A's whole backlog.
      const shared = await receiver();
      shared.respond = (arrival) => (arrival.path.endsWith('/a') ? { status: 200, delayMs: 200 } : { status: 204 });
      const projectA = await project('A', `${shared.url}/a`);
      const projectB = await project('B', `${shared.url}/b`);
      const backlog = 300;
      await enqueueBacklog(server.app, projectA, backlog);
      await shared.waitFor((arrivals) => arrivals.some((arrival) => arrival.path.endsWith('/a')));

      const messages: TestMessage[] = [];
      for (let i = 0; i < 10; i++) {
        const message = await insertMessage(server.app, projectB);
        messages.push(message);
        await emitStatus(server.app, message, 'SENT');
      }
      const arrivedFor = (message: { id: string }) => (arrival: Arrival) => arrival.body.includes(message.id);
      await shared.waitFor((arrivals) => messages.every((message) => arrivals.some(arrivedFor(message))));

      const lastB = Math.max(...messages.map((message) => shared.arrivals.find(arrivedFor(message))!.at));
      const aBefore = shared.arrivals.filter((arrival) => arrival.path.endsWith('/a') && arrival.at <= lastB).length;
      assert.ok(aBefore < backlog / 2, `B was served between A's deliveries (A had ${aBefore} of ${backlog} sent)`);
      const inFlightA = shared.arrivals.filter((arrival) => arrival.path.endsWith('/a') && arrival.at <= lastB && (arrival.answeredAt ?? Infinity) > lastB);
      assert.ok(inFlightA.length < DEFAULT_WEBHOOK_LIMITS.maxPerOrigin, 'A never holds the whole origin');
    });
  });
}
