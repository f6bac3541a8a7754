import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { writeGate } from '../support/writeGate.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { createSender, type Sender, sendBody, waitForStatus } from '../support/sending.ts';

const ENV = {
  SVC_SANDBOX_DELIVERY_DELAY_MS: '30',
  SVC_SANDBOX_READ_DELAY_MS: '30',
  SVC_SEND_RETRY_SCHEDULE: '20ms,20ms,20ms',
};

async function submissions(server: TestServer, messageId: string): Promise<number> {
  const rows = await server.app.database.db
    .selectFrom('sandbox_submissions')
    .select('id')
    .where('message_id', '=', messageId)
    .execute();
  return rows.length;
}

async function statuses(server: TestServer, key: string, id: string): Promise<string[]> {
  const events = await server.call('GET', `/v1/messages/${id}/events`, { key });
  return events.body.map((event: any) => event.status);
}

for (const kind of databaseKinds()) {
  describe(`message lifecycle (${kind})`, () => {
    let server: TestServer;
    let sender: Sender;
    before(async () => {
      server = await startTestServer(kind, { env: ENV });
      sender = await createSender(server);
    });
    after(() => server.close());

    async function send(to: string): Promise<string> {
      const reply = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, to) });
      assert.equal(reply.status, 202, reply.text);
      return reply.body.id;
    }

    describe('magic recipients', () => {
      it('+15550000001 is SENT, then FAILED with 131026', async () => {
        const id = await send('+15550000001');
        const failed = await waitForStatus(server, sender.key, id, 'FAILED');
        assert.equal(failed.error.code, '131026');
        assert.equal(typeof failed.error.title, 'string');
        assert.equal(typeof failed.error.message, 'string');
        assert.match(failed.sentAt, /Z$/);
        assert.deepEqual(await statuses(server, sender.key, id), ['QUEUED', 'SENT', 'FAILED']);
      });

      it('+15550000002 fails every submission transiently: retried on the schedule, then FAILED', async () => {
        const id = await send('+15550000002');
        const failed = await waitForStatus(server, sender.key, id, 'FAILED');
        assert.equal(failed.error.code, '131000');
        assert.equal(failed.sentAt, null);
        assert.equal(await submissions(server, id), 4); // the first try and three retries
        assert.deepEqual(await statuses(server, sender.key, id), ['QUEUED', 'FAILED']);
      });

      it('+15550000003 is DELIVERED and never READ', async () => {
        const id = await send('+15550000003');
        await waitForStatus(server, sender.key, id, 'DELIVERED');
        const pending = await server.app.database.db
          .selectFrom('sandbox_reports')
          .select('id')
          .where('message_id', '=', id)
          .where('status', '=', 'READ')
          .execute();
        assert.equal(pending.length, 0, 'no READ report is planned');
        const message = (await server.call('GET', `/v1/messages/${id}`, { key: sender.key })).body;
        assert.equal(message.status, 'DELIVERED');
        assert.equal(message.readAt, null);
      });

      it('+15550000004 fails its first two submissions, then goes through', async () => {
        const id = await send('+15550000004');
        await waitForStatus(server, sender.key, id, 'READ');
        assert.equal(await submissions(server, id), 3);
        assert.deepEqual(await statuses(server, sender.key, id), ['QUEUED', 'SENT', 'DELIVERED', 'READ']);
      });
    });

    describe('provider outcomes', () => {
      it('a permanent failure fails the message at once with the provider’s error', async () => {
        const own = await startTestServer(kind, { env: ENV });
        try {
          const owner = await createSender(own);
          const rejected = { code: '132001', title: 'Template does not exist', message: 'The template name does not exist.' };
          let calls = 0;
          own.app.provider.sendMessage = async () => {
            calls++;
            return { kind: 'permanent', error: rejected };
          };
          const reply = await own.call('POST', '/v1/messages', { key: owner.key, body: sendBody(owner) });
          const failed = await waitForStatus(own, owner.key, reply.body.id, 'FAILED');
          assert.deepEqual(failed.error, rejected);
          assert.equal(calls, 1);
          assert.deepEqual(await statuses(own, owner.key, reply.body.id), ['QUEUED', 'FAILED']);
        } finally {
          await own.close();
        }
      });

      it('a submission that throws is retried like a transient failure', async () => {
        const own = await startTestServer(kind, { env: ENV });
        try {
          const owner = await createSender(own);
          const real = own.app.provider.sendMessage.bind(own.app.provider);
          let calls = 0;
          own.app.provider.sendMessage = async (message) => {
            calls++;
            if (calls === 1) throw new Error('connection reset');
            return real(message);
          };
          const reply = await own.call('POST', '/v1/messages', { key: owner.key, body: sendBody(owner) });
          await waitForStatus(own, owner.key, reply.body.id, 'READ');
          assert.equal(calls, 2);
        } finally {
          await own.close();
        }
      });
    });

    describe('provider reports', () => {
      // A server of its own whose sandbox never reports by itself, so the test makes every report.
      async function sentMessage() {
        return startTestServer(kind, {
          env: { ...ENV, SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000', SVC_SANDBOX_READ_DELAY_MS: '3600000' },
        });
      }

      it('READ without DELIVERED records DELIVERED first, at the same time', async () => {
        const slow = await sentMessage();
        try {
          const sender = await createSender(slow);
          const reply = await slow.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
          const sent = await waitForStatus(slow, sender.key, reply.body.id, 'SENT');
          const at = Date.now();
          assert.equal(
            await slow.app.inbound({ kind: 'message', providerMessageId: sent.providerMessageId, status: 'READ', occurredAt: at }),
            'applied',
          );
          const events = (await slow.call('GET', `/v1/messages/${sent.id}/events`, { key: sender.key })).body;
          assert.deepEqual(
            events.map((event: any) => event.status),
            ['QUEUED', 'SENT', 'DELIVERED', 'READ'],
          );
          assert.equal(events[2].occurredAt, events[3].occurredAt);
          const read = (await slow.call('GET', `/v1/messages/${sent.id}`, { key: sender.key })).body;
          assert.equal(read.deliveredAt, new Date(at).toISOString());
          assert.equal(read.readAt, new Date(at).toISOString());
        } finally {
          await slow.close();
        }
      });

      it('duplicate, late and out-of-order reports change nothing; FAILED never follows READ', async () => {
        const slow = await sentMessage();
        try {
          const sender = await createSender(slow);
          const reply = await slow.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
          const sent = await waitForStatus(slow, sender.key, reply.body.id, 'SENT');
          const report = (status: 'SENT' | 'DELIVERED' | 'READ' | 'FAILED') =>
            slow.app.inbound({
              kind: 'message',
              providerMessageId: sent.providerMessageId,
              status,
              occurredAt: Date.now(),
              ...(status === 'FAILED' && { error: { code: '131026', title: 't', message: 'm' } }),
            });
          assert.equal(await report('DELIVERED'), 'applied');
          assert.equal(await report('DELIVERED'), 'unchanged');
          assert.equal(await report('SENT'), 'unchanged');
          assert.equal(await report('READ'), 'applied');
          assert.equal(await report('DELIVERED'), 'unchanged');
          assert.equal(await report('FAILED'), 'unchanged');
          assert.equal(
            await slow.app.inbound({ kind: 'message', providerMessageId: 'wamid.unknown', status: 'READ', occurredAt: Date.now() }),
            'unknown',
          );
          const message = (await slow.call('GET', `/v1/messages/${sent.id}`, { key: sender.key })).body;
          assert.equal(message.status, 'READ');
          assert.equal(message.failedAt, null);
          assert.deepEqual(await statuses(slow, sender.key, sent.id), ['QUEUED', 'SENT', 'DELIVERED', 'READ']);
        } finally {
          await slow.close();
        }
      });
    });

    it('never records a status as earlier than the one before it, even with instant reports', async () => {
      const instant = await startTestServer(kind, {
        env: { ...ENV, SVC_SANDBOX_DELIVERY_DELAY_MS: '0', SVC_SANDBOX_READ_DELAY_MS: '0' },
      });
      try {
        const fast = await createSender(instant);
        const ids = await Promise.all(
          Array.from({ length: 20 }, async () => {
            const reply = await instant.call('POST', '/v1/messages', { key: fast.key, body: sendBody(fast) });
            return reply.body.id as string;
          }),
        );
        for (const id of ids) {
          const read = await waitForStatus(instant, fast.key, id, 'READ');
          assert.ok(read.queuedAt <= read.sentAt, JSON.stringify(read));
          assert.ok(read.sentAt <= read.deliveredAt, JSON.stringify(read));
          assert.ok(read.deliveredAt <= read.readAt, JSON.stringify(read));
          const events = (await instant.call('GET', `/v1/messages/${id}/events`, { key: fast.key })).body;
          const times = events.map((event: any) => event.occurredAt);
          assert.deepEqual(times, [...times].sort());
        }
      } finally {
        await instant.close();
      }
    });

    it('a FAILED report without a reason still carries an error', async () => {
      const own = await startTestServer(kind, { env: { ...ENV, SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000' } });
      try {
        const owner = await createSender(own);
        const reply = await own.call('POST', '/v1/messages', { key: owner.key, body: sendBody(owner) });
        const sent = await waitForStatus(own, owner.key, reply.body.id, 'SENT');
        assert.equal(
          await own.app.inbound({ kind: 'message', providerMessageId: sent.providerMessageId, status: 'FAILED', occurredAt: Date.now() }),
          'applied',
        );
        const failed = (await own.call('GET', `/v1/messages/${sent.id}`, { key: owner.key })).body;
        assert.equal(failed.status, 'FAILED');
        assert.equal(failed.error.code, 'unknown');
        assert.equal(typeof failed.error.message, 'string');
      } finally {
        await own.close();
      }
    });

    describe('test helper: advance', () => {
      it('moves a message forward, fills skipped states, and refuses to go back', async () => {
        const slow = await startTestServer(kind, { env: { ...ENV, SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000' } });
        try {
          const sender = await createSender(slow);
          const reply = await slow.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
          const id = reply.body.id;
          await waitForStatus(slow, sender.key, id, 'SENT');
          const read = await slow.call('POST', `/v1/test-helpers/messages/${id}/advance`, {
            key: sender.key,
            body: { status: 'READ' },
          });
          assert.equal(read.status, 200, read.text);
          assert.equal(read.body.status, 'READ');
          assert.deepEqual(await statuses(slow, sender.key, id), ['QUEUED', 'SENT', 'DELIVERED', 'READ']);
          const back = await slow.call('POST', `/v1/test-helpers/messages/${id}/advance`, {
            key: sender.key,
            body: { status: 'DELIVERED' },
          });
          assert.equal(back.status, 409);
          const failed = await slow.call('POST', `/v1/test-helpers/messages/${id}/advance`, {
            key: sender.key,
            body: { status: 'FAILED' },
          });
          assert.equal(failed.status, 409);
          const stranger = await slow.createProject();
          const theirs = await slow.call('POST', `/v1/test-helpers/messages/${id}/advance`, {
            key: stranger.key,
            body: { status: 'READ' },
          });
          assert.equal(theirs.status, 404);
          const bad = await slow.call('POST', `/v1/test-helpers/messages/${id}/advance`, {
            key: sender.key,
            body: { status: 'QUEUED' },
          });
          assert.equal(bad.status, 400);
        } finally {
          await slow.close();
        }
      });

      it('answers the status a message already has with the message, and refuses any other move back or after the end', async () => {
        const slow = await startTestServer(kind, { env: { ...ENV, SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000' } });
        try {
          const sender = await createSender(slow);
          const advance = (id: string, status: string) =>
            slow.call('POST', `/v1/test-helpers/messages/${id}/advance`, { key: sender.key, body: { status } });
          const send = async () => {
            const reply = await slow.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
            assert.equal(reply.status, 202, reply.text);
            await waitForStatus(slow, sender.key, reply.body.id, 'SENT');
            return reply.body.id as string;
          };

          const id = await send();
          for (const status of ['SENT', 'DELIVERED', 'DELIVERED', 'READ', 'READ']) {
            const reply = await advance(id, status);
            assert.equal(reply.status, 200, `${status}: ${reply.text}`);
            assert.equal(reply.body.id, id);
            assert.equal(reply.body.status, status);
          }
          const read = (await slow.call('GET', `/v1/messages/${id}`, { key: sender.key })).body;
          assert.deepEqual((await advance(id, 'READ')).body, read, 'the message as it is');
          assert.deepEqual(await statuses(slow, sender.key, id), ['QUEUED', 'SENT', 'DELIVERED', 'READ'], 'no repeated events');
          for (const status of ['SENT', 'DELIVERED', 'FAILED']) {
            const reply = await advance(id, status);
            assert.equal(reply.status, 409, status);
            assert.equal(reply.body.code, 'invalid_status_transition');
          }

          const failedId = await send();
          assert.equal((await advance(failedId, 'FAILED')).status, 200);
          const again = await advance(failedId, 'FAILED');
          assert.equal(again.status, 200, again.text);
          assert.equal(again.body.status, 'FAILED');
          assert.equal(again.body.error.code, '131026');
          for (const status of ['SENT', 'DELIVERED', 'READ']) {
            const reply = await advance(failedId, status);
            assert.equal(reply.status, 409, status);
            assert.equal(reply.body.code, 'invalid_status_transition');
          }
          assert.deepEqual(await statuses(slow, sender.key, failedId), ['QUEUED', 'SENT', 'FAILED']);
        } finally {
          await slow.close();
        }
      });

      it('FAILED from SENT carries an error', async () => {
        const slow = await startTestServer(kind, { env: { ...ENV, SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000' } });
        try {
          const sender = await createSender(slow);
          const reply = await slow.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
          await waitForStatus(slow, sender.key, reply.body.id, 'SENT');
          const failed = await slow.call('POST', `/v1/test-helpers/messages/${reply.body.id}/advance`, {
            key: sender.key,
            body: { status: 'FAILED' },
          });
          assert.equal(failed.status, 200);
          assert.equal(failed.body.status, 'FAILED');
          assert.equal(typeof failed.body.error.code, 'string');
        } finally {
          await slow.close();
        }
      });
    });

    describe('revocation', () => {
      it('a send whose key is revoked while it is in flight is refused with 401 and stores nothing', async () => {
        const gate = writeGate('/v1/messages');
        const paused = await startTestServer(kind, {
          database: server.database,
          env: ENV,
          testHooks: gate.hooks,
        });
        try {
          const doomed = (await paused.call('POST', '/v1/api-keys', { key: sender.key, body: { name: 'doomed' } })).body;
          gate.arm();
          const to = '+5511933334444';
          const inFlight = paused.call('POST', '/v1/messages', { key: doomed.key, body: sendBody(sender, to) });
          await gate.atWrite;
          assert.equal((await paused.call('DELETE', `/v1/api-keys/${doomed.id}`, { key: sender.key })).status, 200);
          gate.release();
          const late = await inFlight;
          assert.equal(late.status, 401);
          const listed = await paused.call('GET', `/v1/messages?to=${encodeURIComponent(to)}`, { key: sender.key });
          assert.deepEqual(listed.body, []);
        } finally {
          await paused.app.stop();
        }
      });
    });
  });
}
