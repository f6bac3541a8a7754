import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { refusedUrlReason } from '../../src/webhooks/deliver.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { deliveryRows, emitStatus, insertMessage, setCallbackUrl, waitUntil } from '../support/webhookEvents.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// Without SVC_ALLOW_PRIVATE_CALLBACKS, svc must never open a connection to a private, loopback,
// link-local… address, whatever the callback URL says: the checks happen before connecting, so
// no packet leaves for 10.0.0.1 or 169.254.169.254 in these tests. Loopback URLs point at a live
// receiver, which proves the refusal by counting zero connections.

describe('callback URL policy (pure)', () => {
  const refused = (url: string) => refusedUrlReason(new URL(url), false);

  it('refuses literal addresses outside the public internet, however they are written', () => {
    for (const [url, reason] of [
      ['https://127.0.0.1/', /loopback/],
      ['https://0x7f.1/', /loopback/],
      ['https://2130706433/', /loopback/],
      ['https://[::1]/', /loopback/],
      ['https://[::ffff:127.0.0.1]/', /loopback/],
      ['https://[::ffff:7f00:1]/', /loopback/],
      ['https://10.0.0.1/', /private/],
      ['https://192.168.1.1/', /private/],
      ['https://172.16.0.1/', /private/],
      ['https://169.254.169.254/latest/meta-data/', /link-local/],
      ['https://[fe80::1]/', /link-local/],
      ['https://100.64.0.1/', /carrier-grade NAT/],
      ['https://[fd00::1]/', /unique local/],
      ['https://224.0.0.1/', /multicast/],
      ['https://0.0.0.0/', /unspecified/],
      ['https://[::]/', /unspecified/],
    ] as const) {
      assert.match(refused(url) ?? '', reason, url);
    }
  });

  it('refuses http and credentials without the development flag, and allows public https', () => {
    assert.match(refused('http://example.com/hooks') ?? '', /must use https/);
    assert.match(refused('https://user:pass@example.com/hooks') ?? '', /credentials/);
    assert.equal(refused('https://example.com/hooks'), undefined);
    assert.equal(refused('https://93.184.216.34/hooks'), undefined);
    assert.equal(refusedUrlReason(new URL('http://127.0.0.1:8080/hooks'), true), undefined);
  });
});

for (const kind of databaseKinds()) {
  describe(`webhook SSRF guard (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;

    before(async () => {
      server = await startTestServer(kind, {
        env: { SVC_ALLOW_PRIVATE_CALLBACKS: 'false', SVC_WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms' },
      });
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    it('refuses private, loopback and link-local callbacks at delivery time, records why, and never retries', async () => {
      const port = new URL(receiver.url).port;
      const cases: [string, RegExp][] = [
        [`https://127.0.0.1:${port}/hooks`, /refused: 127\.0\.0\.1 is a loopback address/],
        [`https://localhost:${port}/hooks`, /refused: localhost resolves to a loopback address$/],
        ['https://10.0.0.1/hooks', /refused: 10\.0\.0\.1 is a private address/],
        ['https://169.254.169.254/latest/meta-data/', /refused: 169\.254\.169\.254 is a link-local address/],
        [`https://[::1]:${port}/hooks`, /refused: ::1 is a loopback address/],
        [`https://[::ffff:127.0.0.1]:${port}/hooks`, /refused: 127\.0\.0\.1 is a loopback address/],
        [`http://127.0.0.1:${port}/hooks`, /refused: 127\.0\.0\.1 is a loopback address/],
        [`https://0x7f.1:${port}/hooks`, /refused: 127\.0\.0\.1 is a loopback address/],
      ];
      for (const [url, reason] of cases) {
        const { projectId, key } = await server.createProject();
        await setCallbackUrl(server.app, projectId, url);
        const message = await insertMessage(server.app, projectId);
        const { eventId } = await emitStatus(server.app, message, 'SENT');
        await waitUntil(async () => (await deliveryRows(server.app, projectId))[0]?.status === 'failed', 10_000, url);
        const [row] = await deliveryRows(server.app, projectId);
        assert.equal(row!.event_id, eventId);
        assert.equal(row!.attempt_count, 1, `${url}: failed at once, not retried`);
        assert.equal(row!.due_at, null);

        const reply = await server.call('GET', `/v1/webhook-deliveries/${row!.id}`, { key });
        assert.equal(reply.status, 200);
        assert.equal(reply.body.status, 'failed');
        assert.equal(reply.body.attempts.length, 1);
        const [attempt] = reply.body.attempts;
        assert.match(attempt.error, reason, url);
        assert.equal(attempt.statusCode, undefined);
        assert.ok(!('nextAttemptAt' in reply.body));
      }
      assert.equal(receiver.connections, 0, 'not one connection reached the loopback receiver');
      assert.equal(receiver.arrivals.length, 0);
    });
  });
}
