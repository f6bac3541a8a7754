import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { approvedTemplate, createSender, type Sender } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { cliUser, type CliUser, FAST_SANDBOX } from './cli.ts';

// svc batches, suppressions, webhooks secret, templates delete and credentials show: each the
// public API's answer, as text or --json, with the usual exit codes.

for (const kind of databaseKinds()) {
  describe(`svc batches, suppressions, webhooks secret, templates delete, credentials show (${kind})`, () => {
    let server: TestServer;
    let sender: Sender;
    let user: CliUser;
    const json = async (args: string[]) => {
      const result = await user.run([...args, '--json']);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return JSON.parse(result.stdout);
    };

    before(async () => {
      server = await startTestServer(kind, { env: FAST_SANDBOX });
      sender = await createSender(server);
      user = cliUser(server.url);
      user.env.SVC_API_KEY = sender.key;
    });
    after(async () => {
      user.remove();
      await server.close();
    });

    it('adds, lists and removes a suppression; a send to it is refused meanwhile', async () => {
      const added = await json(['suppressions', 'add', '+5521998765432', '--reason', 'Replied STOP']);
      assert.equal(added.phoneNumber, '+5521998765432');
      assert.deepEqual((await json(['suppressions', 'list'])).map((entry: { phoneNumber: string }) => entry.phoneNumber), ['+5521998765432']);
      const refused = await user.run(['send', '--to', '+5521998765432', '--template', sender.templateName, '--language', sender.language, '--var', '1=A', '--var', '2=B', '--json']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /recipient_suppressed/);
      await json(['suppressions', 'remove', '+5521998765432']);
      assert.deepEqual(await json(['suppressions', 'list']), []);
      const invalid = await user.run(['suppressions', 'add', 'not-a-number']);
      assert.equal(invalid.code, 1, invalid.stderr);
    });

    it('shows and rotates the webhook signing secret (asking first, --yes without a terminal)', async () => {
      const shown = await json(['webhooks', 'secret', 'show']);
      assert.equal(shown.secret, (await server.call('GET', '/v1/projects/me/webhook-secret', { key: sender.key })).body.secret);
      const unasked = await user.run(['webhooks', 'secret', 'rotate']);
      assert.equal(unasked.code, 2, 'no terminal to ask: a usage error, nothing rotated');
      assert.equal((await json(['webhooks', 'secret', 'show'])).secret, shown.secret);
      const rotated = await json(['webhooks', 'secret', 'rotate', '--yes']);
      assert.notEqual(rotated.secret, shown.secret);
      assert.deepEqual((await json(['webhooks', 'secret', 'show'])).secrets.sort(), [rotated.secret, shown.secret].sort());
      const text = await user.run(['webhooks', 'secret', 'show']);
      assert.match(text.stdout, new RegExp(`^${rotated.secret.replace(/[+/]/g, '\\$&')}\\n.*previous, still signing`));
    });

    it('lists batches and shows one', async () => {
      const batch = await server.call('POST', '/v1/messages/batch', {
        key: sender.key,
        body: { template: sender.templateName, language: sender.language, items: [{ to: '+5511987650101', variables: { '1': 'Ana', '2': 'A-1' } }] },
      });
      assert.equal(batch.status, 202, batch.text);
      const listed = await json(['batches', 'list']);
      assert.ok(listed.some((one: { id: string }) => one.id === batch.body.batchId));
      const shown = await json(['batches', 'get', batch.body.batchId]);
      assert.equal(shown.total, 1);
      const missing = await user.run(['batches', 'get', 'bat_00000000000000000000000000']);
      assert.equal(missing.code, 1);
    });

    it('deletes a template (another project’s is not found), and shows the credentials', async () => {
      const id = await approvedTemplate(server, sender.key, 'to_delete', 'en_US');
      const other = await server.createProject('Other');
      const theirs = await approvedTemplate(server, other.key, 'theirs', 'en_US');
      const refused = await user.run(['templates', 'delete', theirs, '--yes']);
      assert.equal(refused.code, 1, refused.stderr);
      assert.equal((await server.call('GET', `/v1/templates/${theirs}`, { key: other.key })).status, 200);
      assert.equal((await user.run(['templates', 'delete', id])).code, 2, 'asks first; no terminal: usage error');
      await json(['templates', 'delete', id, '--yes']);
      assert.equal((await server.call('GET', `/v1/templates/${id}`, { key: sender.key })).status, 404);
      const project = await json(['credentials', 'show']);
      assert.equal(project.projectId, sender.projectId);
      assert.doesNotMatch(JSON.stringify(project), /providerAccessToken|EAAG/);
    });
  });
}
