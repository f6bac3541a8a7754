import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createProviderInbound } from '../../src/workers/providerReports.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { createSender, type Sender, sendBody, waitForStatus } from '../support/sending.ts';
import { whatsappErrorClass } from '../../src/providers/whatsapp/errorClasses.ts';

// The sandbox plans its reports an hour away: the tests make the reports themselves.
const ENV = { SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000', SVC_SANDBOX_READ_DELAY_MS: '3600000' };

for (const kind of databaseKinds()) {
  describe(`provider reports arriving together (${kind})`, () => {
    let server: TestServer;
    let sender: Sender;
    before(async () => {
      server = await startTestServer(kind, { env: ENV });
      sender = await createSender(server);
    });
    after(() => server.close());

    async function sentMessage(to?: string): Promise<{ id: string; providerMessageId: string }> {
      const reply = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, to) });
      assert.equal(reply.status, 202, reply.text);
      const sent = await waitForStatus(server, sender.key, reply.body.id, 'SENT');
      return { id: sent.id, providerMessageId: sent.providerMessageId };
    }

    const report = (message: { id: string; providerMessageId: string }, status: 'DELIVERED' | 'READ' | 'FAILED', byProviderIdOnly = false) => ({
      kind: 'message' as const,
      ...(!byProviderIdOnly && { messageId: message.id }),
      providerMessageId: message.providerMessageId,
      status,
      occurredAt: Date.now(),
      ...(status === 'FAILED' && { error: { code: '131026', title: 'Undeliverable', message: 'x' } }),
    });

    async function statuses(id: string): Promise<string[]> {
      const events = await server.call('GET', `/v1/messages/${id}/events`, { key: sender.key });
      return events.body.map((event: { status: string }) => event.status);
    }

    it('applies many messages\' reports in one go, each answered for itself', async () => {
      const messages = await Promise.all(Array.from({ length: 30 }, () => sentMessage()));
      const results = await Promise.all([
        ...messages.map((message, index) => server.app.inbound(report(message, 'DELIVERED', index % 2 === 0))),
        server.app.inbound({ kind: 'message', providerMessageId: 'wamid.nobody', status: 'READ', occurredAt: Date.now() }),
      ]);
      assert.deepEqual(results, [...messages.map(() => 'applied'), 'unknown']);
      for (const message of messages) assert.deepEqual(await statuses(message.id), ['QUEUED', 'SENT', 'DELIVERED']);
    });

    it('applies two reports about one message, arriving together, in the order they came', async () => {
      const message = await sentMessage();
      const results = await Promise.all([server.app.inbound(report(message, 'DELIVERED')), server.app.inbound(report(message, 'READ', true))]);
      assert.deepEqual(results, ['applied', 'applied']);
      assert.deepEqual(await statuses(message.id), ['QUEUED', 'SENT', 'DELIVERED', 'READ']);

      const late = await sentMessage();
      const lateResults = await Promise.all([
        server.app.inbound(report(late, 'READ')),
        server.app.inbound(report(late, 'DELIVERED')),
        server.app.inbound(report(late, 'FAILED')),
      ]);
      // READ implies DELIVERED; a late DELIVERED and a FAILED after READ change nothing.
      assert.deepEqual(lateResults, ['applied', 'unchanged', 'unchanged']);
      assert.deepEqual(await statuses(late.id), ['QUEUED', 'SENT', 'DELIVERED', 'READ']);
    });

    it('built without the composition root, suppresses nobody: SVC_AUTO_SUPPRESS is off unless given', async () => {
      // The reports' use case built from its parts alone, as a second entry point would build it.
      const { database, notifier } = server.app;
      const logger = pino({ level: 'silent' });
      const suppressed = async (number: string) =>
        (await server.call('GET', `/v1/suppressions/${encodeURIComponent(number)}`, { key: sender.key })).status === 200;

      const unset = await sentMessage('+5511987650001');
      assert.equal(await createProviderInbound({ database, notifier, logger, errorClassOf: whatsappErrorClass })(report(unset, 'FAILED')), 'applied');
      assert.deepEqual(await statuses(unset.id), ['QUEUED', 'SENT', 'FAILED']);
      assert.equal(await suppressed('+5511987650001'), false);

      const on = await sentMessage('+5511987650002');
      assert.equal(await createProviderInbound({ database, notifier, logger, autoSuppress: true, errorClassOf: whatsappErrorClass })(report(on, 'FAILED')), 'applied');
      assert.equal(await suppressed('+5511987650002'), true);
    });
  });
}
