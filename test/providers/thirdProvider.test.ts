import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type {
  AccountCheck,
  AccountQuery,
  MessageSubmission,
  Provider,
  ProviderInbound,
  SendOutcome,
  TemplateCheck,
  TemplateDeletion,
} from '../../src/providers/provider.ts';
import { PROVIDERS, type ProviderRegistry } from '../../src/providers/registry.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { liveSecrets } from '../support/webhookEvents.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// A provider svc was not built with, registered through the registry by this test alone: its
// folder would hold just this class and its entry. It approves every template, accepts every
// message, and reports it delivered then read through svc's one inbound entry point. A message
// sent over HTTP must go the whole way: queued, handed to it, reported, and webhooked.

class EchoProvider implements Provider {
  readonly name = 'echo';
  readonly submissionTimeoutMs = 1000;
  readonly sent: MessageSubmission[] = [];
  #inbound: ProviderInbound | undefined;

  async checkAccount(query: AccountQuery): Promise<AccountCheck> {
    return {
      kind: 'checked',
      account: {
        businessAccountId: `echo-${query.credentials.sender}`,
        displayPhoneNumber: null,
        verifiedName: null,
        qualityRating: null,
        messagesPerSecond: null,
        webhooksSubscribed: true,
        problem: null,
      },
    };
  }

  async submitTemplate(): Promise<{ providerTemplateId: string | null; checkAfterMs: number }> {
    return { providerTemplateId: null, checkAfterMs: 0 };
  }

  async checkTemplate(): Promise<TemplateCheck> {
    return { status: 'APPROVED', providerTemplateId: 'echo-template' };
  }

  async deleteTemplate(): Promise<TemplateDeletion> {
    return { kind: 'deleted' };
  }

  async sendMessage(message: MessageSubmission): Promise<SendOutcome> {
    this.sent.push(message);
    const providerMessageId = `echo.${message.messageId}`;
    // Reported after the outcome is recorded, as a real provider's webhook would come.
    setImmediate(async () => {
      await until('the send to be recorded', async () => (await this.#inbound!({ kind: 'message', providerMessageId, status: 'DELIVERED', occurredAt: Date.now() })) !== 'unknown');
      await this.#inbound!({ kind: 'message', providerMessageId, status: 'READ', occurredAt: Date.now() });
    });
    return { kind: 'accepted', providerMessageId };
  }

  start(inbound: ProviderInbound): void {
    this.#inbound = inbound;
  }

  async stop(): Promise<void> {}
}

for (const kind of databaseKinds()) {
  describe(`a third provider, registered through the registry (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    const echo = new EchoProvider();
    const registry: ProviderRegistry = { ...PROVIDERS, echo: { create: () => echo } };

    before(async () => {
      receiver = await startWebhookReceiver();
      server = await startTestServer(kind, { provider: { name: 'echo', registry } });
    });
    after(async () => {
      await server?.close();
      await receiver?.close();
    });

    it('sends a message through it end to end: queued, sent, delivered, read, each webhooked', async () => {
      const { key, projectId } = await server.createProject();
      const credentials = await server.call('PUT', '/v1/projects/me/provider-credentials', {
        key,
        body: { providerPhoneNumberId: 'echo-sender-1', providerAccessToken: 'echo-secret', callbackUrl: `${receiver.url}/hook` },
      });
      assert.equal(credentials.status, 200, credentials.text);
      assert.equal(credentials.body.provider.businessAccountId, 'echo-echo-sender-1');
      receiver.secrets = await liveSecrets(server.app, projectId);

      const template = await server.call('POST', '/v1/templates', {
        key,
        body: { name: 'order_update', language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hello {{1}}.' }] },
      });
      assert.equal(template.status, 200, template.text);
      await until('the template to be approved', async () => {
        const found = await server.call('GET', `/v1/templates/${template.body.id}`, { key });
        return found.body.status === 'APPROVED';
      });

      const accepted = await server.call('POST', '/v1/messages', {
        key,
        body: { to: '+5511987654321', template: 'order_update', language: 'en_US', variables: { '1': 'Ana' } },
      });
      assert.equal(accepted.status, 202, accepted.text);
      const read = await until('the message to be READ', async () => {
        const message = await server.call('GET', `/v1/messages/${accepted.body.id}`, { key });
        return message.body.status === 'READ' && message.body;
      });
      assert.equal(read.providerMessageId, `echo.${accepted.body.id}`);
      assert.equal(echo.sent.length, 1);
      assert.equal(echo.sent[0]!.to, '+5511987654321');
      assert.deepEqual(echo.sent[0]!.credentials, { sender: 'echo-sender-1', secret: 'echo-secret' });
      assert.deepEqual(echo.sent[0]!.bodyParameters, ['Ana']);

      await receiver.waitFor((arrivals) => arrivals.length >= 3);
      assert.ok(receiver.arrivals.every((arrival) => arrival.verified[0]), 'every webhook is signed with the project’s secret');
      const statuses = receiver.arrivals.map((arrival) => JSON.parse(arrival.body).status);
      assert.deepEqual([...statuses].sort(), ['DELIVERED', 'READ', 'SENT']);
      const project = await server.call('GET', '/v1/projects/me', { key });
      assert.equal(project.body.providerName, 'echo');
    });
  });
}
