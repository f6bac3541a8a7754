import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';
import { cliUser, type CliUser, FAST_SANDBOX } from './cli.ts';

// svc webhooks endpoints list|get|create|update|delete|test against a live svc: what each command
// changes is read back through the API, and each refusal exits with its documented code.

for (const kind of databaseKinds()) {
  describe(`svc webhooks endpoints (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    let key: string;
    let user: CliUser;
    const json = async (args: string[]) => {
      const result = await user.run([...args, '--json']);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return JSON.parse(result.stdout);
    };
    const read = async (id: string) => (await server.call('GET', `/v1/webhook-endpoints/${id}`, { key })).body;

    before(async () => {
      server = await startTestServer(kind, { env: FAST_SANDBOX });
      receiver = await startWebhookReceiver();
      key = (await server.createProject()).key;
      user = cliUser(server.url);
      user.env.SVC_API_KEY = key;
    });
    after(async () => {
      user.remove();
      await receiver.close();
      await server.close();
    });

    it('creates, lists, gets, updates (events, all events, enable/disable, note) and deletes an endpoint', async () => {
      const created = await json([
        'webhooks', 'endpoints', 'create', '--url', `${receiver.url}/a`,
        '--events', 'message.failed,template.rejected', '--events', 'message.read', '--description', 'ops pager',
      ]);
      assert.match(created.id, /^we_[0-9a-z]{26}$/);
      assert.deepEqual(await read(created.id), created);
      assert.deepEqual(created.events, ['message.failed', 'template.rejected', 'message.read']);
      assert.equal(created.allEvents, false);

      const everything = await json(['webhooks', 'endpoints', 'create', '--url', `${receiver.url}/b`, '--disabled']);
      assert.equal(everything.allEvents, true, 'no --events: every event');
      assert.equal(everything.enabled, false);

      const listed = await json(['webhooks', 'endpoints', 'list']);
      assert.deepEqual(listed.map((endpoint: { id: string }) => endpoint.id), [everything.id, created.id]);
      const table = await user.run(['webhooks', 'endpoints', 'list']);
      assert.equal(table.code, 0);
      assert.match(table.stdout, new RegExp(`${everything.id}\\s+\\S+/b\\s+all\\s+no`));
      assert.deepEqual(await json(['webhooks', 'endpoints', 'get', created.id]), created);

      const narrowed = await json(['webhooks', 'endpoints', 'update', created.id, '--events', 'message.delivered']);
      assert.deepEqual([narrowed.events, narrowed.allEvents, narrowed.description], [['message.delivered'], false, 'ops pager'], 'only events changed');
      const widened = await json(['webhooks', 'endpoints', 'update', created.id, '--all-events', '--no-description', '--url', `${receiver.url}/c`]);
      assert.equal(widened.allEvents, true);
      assert.equal(widened.description, null);
      assert.equal(widened.url, `${receiver.url}/c`);
      assert.equal((await read(created.id)).allEvents, true);
      const enabled = await user.run(['webhooks', 'endpoints', 'update', everything.id, '--enable']);
      assert.equal(enabled.code, 0, enabled.stderr);
      assert.match(enabled.stdout, /all events \(including ones added later\)/);
      assert.equal((await read(everything.id)).enabled, true);

      const unasked = await user.run(['webhooks', 'endpoints', 'delete', everything.id]);
      assert.equal(unasked.code, 2, 'no terminal to ask: a usage error, nothing deleted');
      assert.equal((await read(everything.id)).id, everything.id);
      assert.deepEqual(await json(['webhooks', 'endpoints', 'delete', everything.id, '--yes']), { id: everything.id, deleted: true });
      const gone = await user.run(['webhooks', 'endpoints', 'get', everything.id]);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /not_found/);
    });

    it('sends a test event, which arrives signed; a disabled endpoint is refused (exit 1)', async () => {
      receiver.secrets = (await server.call('GET', '/v1/projects/me/webhook-secret', { key })).body.secrets;
      const endpoint = await json(['webhooks', 'endpoints', 'create', '--url', `${receiver.url}/test`, '--events', 'message.failed']);
      const fired = await json(['webhooks', 'endpoints', 'test', endpoint.id]);
      assert.match(fired.deliveryId, /^[0-9a-f-]{36}$/);
      const arrival = await until('the test event', () => receiver.arrivals.find((one) => one.headers['x-service-delivery'] === fired.deliveryId), 15_000);
      assert.equal(arrival.headers['x-service-event'], 'webhook.test');
      assert.equal(JSON.parse(arrival.body).endpoint_id, endpoint.id);
      assert.ok(arrival.verified.some(Boolean), 'signed with the project’s secret');

      await json(['webhooks', 'endpoints', 'update', endpoint.id, '--disable']);
      const refused = await user.run(['webhooks', 'endpoints', 'test', endpoint.id]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /webhook_endpoint_disabled/);
    });

    it('refuses bad input with the documented exit codes and never touches another project’s endpoint', async () => {
      const unknown = await user.run(['webhooks', 'endpoints', 'create', '--url', `${receiver.url}/x`, '--events', 'message.exploded', '--json']);
      assert.equal(unknown.code, 1);
      assert.equal(JSON.parse(unknown.stderr).error.problem.code, 'webhook_event_unknown');
      assert.equal((await user.run(['webhooks', 'endpoints', 'create', '--url', 'ftp://nope.example'])).code, 1, 'the API refuses the URL');
      assert.equal((await user.run(['webhooks', 'endpoints', 'create'])).code, 2, '--url is required');
      assert.equal((await user.run(['webhooks', 'endpoints', 'create', '--url', `${receiver.url}/x`, '--events', ','])).code, 2);

      const mine = await json(['webhooks', 'endpoints', 'create', '--url', `${receiver.url}/mine`]);
      assert.equal((await user.run(['webhooks', 'endpoints', 'update', mine.id])).code, 2, 'nothing to change');
      assert.equal((await user.run(['webhooks', 'endpoints', 'update', mine.id, '--events', 'message.read', '--all-events'])).code, 2);
      assert.equal((await user.run(['webhooks', 'endpoints', 'update', mine.id, '--enable', '--disable'])).code, 2);

      const other = await server.createProject('Other');
      const theirs = await server.call('POST', '/v1/webhook-endpoints', { key: other.key, body: { url: `${receiver.url}/theirs`, events: ['message.read'] } });
      assert.equal(theirs.status, 201, theirs.text);
      for (const args of [
        ['get', theirs.body.id],
        ['update', theirs.body.id, '--all-events'],
        ['test', theirs.body.id],
        ['delete', theirs.body.id, '--yes'],
      ]) {
        const result = await user.run(['webhooks', 'endpoints', ...args]);
        assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, /not_found/);
      }
      assert.deepEqual((await server.call('GET', `/v1/webhook-endpoints/${theirs.body.id}`, { key: other.key })).body, theirs.body);

      const signedOut = await user.run(['webhooks', 'endpoints', 'list'], { env: { SVC_API_KEY: 'svc_live_not_a_key' } });
      assert.equal(signedOut.code, 3);
    });
  });
}
