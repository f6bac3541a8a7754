import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSender, type Sender } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { cliUser, type CliUser, FAST_SANDBOX } from './cli.ts';

describe('svc templates, send and messages (the CLI against a running svc)', () => {
  let server: TestServer;
  let sender: Sender;
  let user: CliUser;

  before(async () => {
    server = await startTestServer('sqlite', { env: FAST_SANDBOX });
    sender = await createSender(server);
    user = cliUser(server.url);
    user.env.SVC_API_KEY = sender.key;
  });
  after(async () => {
    user.remove();
    await server.close();
  });

  const send = (...extra: string[]) =>
    user.run(['send', '--template', sender.templateName, '--language', sender.language, '--var', '1=Ana', '--var', '2=A-1001', ...extra]);

  describe('templates', () => {
    function templateFile(name: string): string {
      const file = join(user.home, `${name}.json`);
      writeFileSync(
        file,
        JSON.stringify({ name, language: 'pt_BR', category: 'UTILITY', components: [{ type: 'BODY', text: 'Olá {{1}}, seu pedido chegou hoje.' }] }),
      );
      return file;
    }

    it('creates a template and waits until it is APPROVED', async () => {
      const created = await user.run(['templates', 'create', '-f', templateFile('delivery_note'), '--wait']);
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.stdout, /^delivery_note \(pt_BR, UTILITY\) tpl_\w+: APPROVED/);
      const listed = await user.run(['templates', 'list', '--json']);
      const names = JSON.parse(listed.stdout).map((template: { name: string; status: string }) => `${template.name}:${template.status}`);
      assert.ok(names.includes('delivery_note:APPROVED'), names.join());
    });

    it('exits 4 with the reason when the review REJECTS it', async () => {
      const created = await user.run(['templates', 'create', '-f', templateFile('reject_this_one'), '--wait', '--json']);
      assert.equal(created.code, 4, created.stderr);
      const template = JSON.parse(created.stdout);
      assert.equal(template.status, 'REJECTED');
      assert.ok(template.rejectionReason);
    });

    it('exits 2 for a file that cannot be read or is not JSON, 1 for a template the API refuses', async () => {
      assert.equal((await user.run(['templates', 'create', '-f', join(user.home, 'missing.json')])).code, 2);
      const notJson = join(user.home, 'not.json');
      writeFileSync(notJson, '{ name: ');
      assert.equal((await user.run(['templates', 'create', '-f', notJson])).code, 2);
      const bad = join(user.home, 'bad.json');
      writeFileSync(bad, JSON.stringify({ name: 'Not A Slug', language: 'pt_BR', category: 'UTILITY', components: [] }));
      const refused = await user.run(['templates', 'create', '-f', bad]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /validation_failed, HTTP 400/);
    });
  });

  describe('send', () => {
    it('follows a message to READ, printing each status, exit 0', async () => {
      const sent = await send('--to', '+5511987654321', '--follow');
      assert.equal(sent.code, 0, sent.stderr);
      const statuses = [...sent.stdout.matchAll(/^ {2}(QUEUED|SENT|DELIVERED|READ) /gm)].map((match) => match[1]);
      assert.deepEqual(statuses, ['QUEUED', 'SENT', 'DELIVERED', 'READ']);
    });

    it('prints the final message as JSON with --json --follow', async () => {
      const sent = await send('--to', '+5511987654322', '--follow', '--json');
      assert.equal(sent.code, 0, sent.stderr);
      const message = JSON.parse(sent.stdout);
      assert.equal(message.status, 'READ');
      assert.equal(message.content.body, 'Hello Ana, your order A-1001 has shipped today.');
    });

    it('exits 4 when the followed message FAILS, showing the provider error', async () => {
      const sent = await send('--to', '+15550000001', '--follow');
      assert.equal(sent.code, 4, sent.stderr);
      assert.match(sent.stdout, /FAILED .*131026/);
    });

    it('exits 5 when --timeout runs out before a final status', async () => {
      const sent = await send('--to', '+15550000003', '--follow', '--timeout', '1s');
      assert.equal(sent.code, 5, sent.stdout);
      assert.match(sent.stderr, /timed out/);
    });

    it('sends without following: the queued message, as JSON', async () => {
      const sent = await send('--to', '+5511987654323', '--json');
      assert.equal(sent.code, 0, sent.stderr);
      const message = JSON.parse(sent.stdout);
      assert.equal(message.status, 'QUEUED');
      const shown = await user.run(['messages', 'get', message.id, '--json']);
      assert.equal(JSON.parse(shown.stdout).id, message.id);
    });

    it('replays a send with the same --idempotency-key instead of sending twice', async () => {
      const first = JSON.parse((await send('--to', '+5511987654324', '--idempotency-key', 'order-1001', '--json')).stdout);
      const again = JSON.parse((await send('--to', '+5511987654324', '--idempotency-key', 'order-1001', '--json')).stdout);
      assert.equal(again.id, first.id);
    });

    it('exits 2 for malformed variables and 1 with the API’s reason for an unknown template', async () => {
      assert.equal((await send('--to', '+5511987654321', '--var', 'name=Ana')).code, 2);
      assert.equal((await user.run(['send', '--to', '+5511987654321', '--template', 'x'])).code, 2, '--language is required');
      const unknown = await user.run(['send', '--to', '+5511987654321', '--template', 'nope', '--language', 'en_US']);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /template_not_found, HTTP 422/);
    });
  });

  describe('messages', () => {
    it('lists messages with filters, as a table and as JSON', async () => {
      await send('--to', '+5511987654329', '--follow');
      const listed = await user.run(['messages', 'list', '--to', '+5511987654329', '--json']);
      assert.equal(listed.code, 0, listed.stderr);
      const messages = JSON.parse(listed.stdout);
      assert.equal(messages.length, 1);
      assert.equal(messages[0].status, 'READ');
      const table = await user.run(['messages', 'list', '--status', 'read', '--limit', '2']);
      assert.equal(table.stdout.trim().split('\n').length, 3);
      assert.match(table.stdout, /^ID\s+STATUS\s+TO/);
    });

    it('shows a message with its events and deliveries', async () => {
      const id = JSON.parse((await send('--to', '+5511987654330', '--follow', '--json')).stdout).id;
      const shown = await user.run(['messages', 'get', id, '--events', '--json']);
      assert.equal(shown.code, 0, shown.stderr);
      assert.deepEqual(JSON.parse(shown.stdout).events.map((event: { status: string }) => event.status), ['QUEUED', 'SENT', 'DELIVERED', 'READ']);
      const human = await user.run(['messages', 'get', id]);
      assert.match(human.stdout, /body: {6}Hello Ana, your order A-1001 has shipped today\./);
    });

    it('cancels a scheduled message; a message already sent cannot be (exit 1); another project’s id is 404', async () => {
      const sendAt = new Date(Date.now() + 3_600_000).toISOString();
      const scheduled = JSON.parse((await send('--to', '+5511987654331', '--send-at', sendAt, '--json')).stdout);
      assert.equal(scheduled.scheduledFor, sendAt);
      const canceled = await user.run(['messages', 'cancel', scheduled.id, '--json']);
      assert.equal(canceled.code, 0, canceled.stderr);
      assert.equal(JSON.parse(canceled.stdout).status, 'CANCELED');

      const read = JSON.parse((await send('--to', '+5511987654332', '--follow', '--json')).stdout);
      const refused = await user.run(['messages', 'cancel', read.id]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /message_not_cancelable, HTTP 409/);

      const other = await server.createProject('Other');
      const foreign = await user.run(['messages', 'get', read.id], { env: { SVC_API_KEY: other.key } });
      assert.equal(foreign.code, 1);
      assert.match(foreign.stderr, /not_found, HTTP 404/);
    });
  });
});
