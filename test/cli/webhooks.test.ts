import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { createSender, type Sender, sendBody, waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';
import { cliUser, type CliUser, closedUrl, FAST_SANDBOX, type RunningCli } from './cli.ts';

for (const kind of databaseKinds()) {
  describe(`svc webhooks listen, messages tail, deliveries (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    let sender: Sender;
    let user: CliUser;
    const running: RunningCli[] = [];

    before(async () => {
      server = await startTestServer(kind, { env: FAST_SANDBOX });
      receiver = await startWebhookReceiver();
      sender = await createSender(server);
      user = cliUser(server.url);
      user.env.SVC_API_KEY = sender.key;
    });
    after(async () => {
      for (const cli of running) await cli.stop();
      user.remove();
      await receiver.close();
      await server.close();
    });

    function start(args: string[]): RunningCli {
      const cli = user.start(args);
      running.push(cli);
      return cli;
    }

    async function sendMessage(to = '+5511987654321'): Promise<string> {
      const sent = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, to) });
      assert.equal(sent.status, 202, sent.text);
      return sent.body.id;
    }

    it('forwards each event to the local URL, signed with the secret it printed, the body as svc’s webhook', async () => {
      const listen = start(['webhooks', 'listen', '--forward-to', receiver.url, '--interval', '100ms', '--json']);
      const ready = await until('listen to be ready', () => listen.lines()[0], 15_000);
      assert.equal(ready.ready, true);
      assert.match(ready.secret, /^whsec_/);
      receiver.secrets = [ready.secret, 'whsec_' + Buffer.alloc(24, 1).toString('base64')];

      const id = await sendMessage();
      await waitForStatus(server, sender.key, id, 'READ');
      const arrivals = await until('three forwarded events', () => {
        const mine = receiver.arrivals.filter((arrival) => arrival.body.includes(id));
        return mine.length === 3 && mine;
      });
      assert.deepEqual(arrivals.map((arrival) => arrival.headers['x-service-event']), ['message.sent', 'message.delivered', 'message.read']);
      const feed = (await server.call('GET', '/v1/events', { key: sender.key })).body as { id: string; payload: unknown }[];
      for (const arrival of arrivals) {
        assert.deepEqual(arrival.verified, [true, false], 'signed with the printed secret only');
        assert.equal(arrival.method, 'POST');
        assert.equal(arrival.path, '/hooks');
        assert.equal(arrival.headers['user-agent'], 'Service/1.0');
        assert.equal(arrival.headers['content-type'], 'application/json');
        assert.equal(arrival.headers['webhook-id'], arrival.deliveryId);
        assert.match(arrival.deliveryId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        assert.ok(feed.some((event) => JSON.stringify(event.payload) === arrival.body), 'the body is the event’s payload');
      }
      await until('three results printed', () => listen.lines().filter((line) => line.statusCode === 200).length === 3);

      // The secret is the config's: the same on the next run.
      assert.equal(JSON.parse(readFileSync(user.configFile, 'utf8')).listenSecret, ready.secret);
      await listen.stop();
      const again = start(['webhooks', 'listen', '--forward-to', receiver.url, '--json']);
      const second = await until('listen to be ready again', () => again.lines()[0], 15_000);
      assert.equal(second.secret, ready.secret);
      assert.equal(await again.stop(), 0);
    });

    it('replays events from --since and filters with --events', async () => {
      const id = await sendMessage('+15550000001');
      await waitForStatus(server, sender.key, id, 'FAILED');
      const before = receiver.arrivals.length;
      const listen = start(['webhooks', 'listen', '--forward-to', receiver.url, '--since', '5m', '--events', 'message.failed', '--json']);
      await until('the failure forwarded', () => receiver.arrivals.slice(before).some((arrival) => arrival.body.includes(id)));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const forwarded = receiver.arrivals.slice(before);
      assert.ok(forwarded.every((arrival) => arrival.headers['x-service-event'] === 'message.failed'));
      assert.equal(JSON.parse(forwarded.find((arrival) => arrival.body.includes(id))!.body).error.code, '131026');
      await listen.stop();
    });

    it('prints what it could not deliver and keeps going', async () => {
      const listen = start(['webhooks', 'listen', '--forward-to', `${await closedUrl()}/nothing-here`, '--interval', '100ms', '--json']);
      await until('listen to be ready', () => listen.lines()[0], 15_000);
      await sendMessage('+5511987654399');
      const failure = await until('a failed forward', () => listen.lines().find((line) => line.error !== undefined), 15_000);
      assert.match(failure.error, /ECONNREFUSED/);
      assert.equal(listen.child.exitCode, null, 'still running');
      await listen.stop();
    });

    it('refuses a --forward-to that is not an http URL (exit 2) and runs only signed in (exit 3)', async () => {
      assert.equal((await user.run(['webhooks', 'listen', '--forward-to', 'ftp://x'])).code, 2);
      const noKey = await user.run(['webhooks', 'listen', '--forward-to', receiver.url], { env: { SVC_API_KEY: '' } });
      assert.equal(noKey.code, 3);
    });

    it('tails new messages and their status changes as they happen', async () => {
      const tail = start(['messages', 'tail', '--interval', '100ms', '--json']);
      await until('tail to start', () => tail.stderr().includes('Following'), 15_000);
      const id = await sendMessage('+5511987654398');
      const lines = await until('the message to be tailed to READ', () => {
        const mine = tail.lines().filter((line) => line.messageId === id);
        return mine.some((line) => line.status === 'READ') && mine;
      }).catch((error: Error) => assert.fail(`${error.message}\nstdout:\n${tail.stdout()}\nstderr:\n${tail.stderr()}`));
      assert.deepEqual(lines.map((line) => line.status), ['QUEUED', 'SENT', 'DELIVERED', 'READ']);
      assert.equal(await tail.stop(), 0);
    });

    it('lists deliveries and retries one', async () => {
      const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', { key: sender.key, body: { callbackUrl: receiver.url } });
      assert.equal(saved.status, 200, saved.text);
      const id = await sendMessage('+5511987654397');
      await waitForStatus(server, sender.key, id, 'READ');
      const listed = await until('three deliveries', async () => {
        const result = await user.run(['deliveries', 'list', '--message', id, '--json']);
        const deliveries = JSON.parse(result.stdout) as { id: string; status: string }[];
        return deliveries.length === 3 && deliveries.every((delivery) => delivery.status === 'succeeded') && deliveries;
      });
      const human = await user.run(['deliveries', 'list', '--message', id]);
      assert.match(human.stdout, /^ID\s+EVENT\s+STATUS\s+ATTEMPTS/);
      const retried = await user.run(['deliveries', 'retry', listed[0]!.id, '--json']);
      assert.equal(retried.code, 0, retried.stderr);
      await until('a second attempt', async () => {
        const shown = JSON.parse((await user.run(['deliveries', 'get', listed[0]!.id, '--json'])).stdout);
        return shown.attempts.length === 2;
      });
      const other = await server.createProject('Other');
      const foreign = await user.run(['deliveries', 'retry', listed[0]!.id], { env: { SVC_API_KEY: other.key } });
      assert.equal(foreign.code, 1);
      assert.match(foreign.stderr, /HTTP 404/);
    });
  });
}
