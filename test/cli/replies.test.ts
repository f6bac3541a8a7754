import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { addQuickReplies } from '../support/replies.ts';
import { createSender, type Sender, sendBody, waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { cliUser, type CliUser, type RunningCli } from './cli.ts';

// `svc messages tail` prints replies (message.replied, from GET /v1/events) beside status changes.

for (const kind of databaseKinds()) {
  describe(`svc messages tail, replies (${kind})`, () => {
    let server: TestServer;
    let sender: Sender;
    let user: CliUser;
    let tail: RunningCli | undefined;

    before(async () => {
      server = await startTestServer(kind, { env: { SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000', SVC_SANDBOX_READ_DELAY_MS: '3600000' } });
      sender = await createSender(server);
      const [template] = (await server.call('GET', '/v1/templates', { key: sender.key })).body;
      await addQuickReplies(server, template.id, ['Yes, confirm', 'Reschedule']);
      user = cliUser(server.url);
      user.env.SVC_API_KEY = sender.key;
    });
    after(async () => {
      await tail?.stop();
      user.remove();
      await server.close();
    });

    it('prints a quick-reply tap and a text reply, in JSON and for people', async () => {
      tail = user.start(['messages', 'tail', '--interval', '100ms', '--json']);
      await until('tail to start', () => tail!.stderr().includes('Following'), 15_000);
      const sent = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, '+5511987654390') });
      assert.equal(sent.status, 202, sent.text);
      const id = sent.body.id;
      await waitForStatus(server, sender.key, id, 'SENT');
      assert.equal((await server.call('POST', `/v1/test-helpers/messages/${id}/reply`, { key: sender.key, body: { buttonIndex: 0 } })).status, 200);
      assert.equal((await server.call('POST', `/v1/test-helpers/messages/${id}/reply`, { key: sender.key, body: { text: 'Thanks!' } })).status, 200);
      const lines = await until('the replies to be tailed', () => {
        const mine = tail!.lines().filter((line) => line.messageId === id);
        return mine.filter((line) => line.event === 'message.replied').length === 2 && mine;
      }).catch((error: Error) => assert.fail(`${error.message}\nstdout:\n${tail!.stdout()}\nstderr:\n${tail!.stderr()}`));
      assert.deepEqual(
        lines.map((line) => [line.event, line.status, line.reply]),
        [
          ['message.queued', 'QUEUED', undefined],
          ['message.sent', 'SENT', undefined],
          ['message.replied', undefined, { type: 'button', text: 'Yes, confirm', payload: 'Yes, confirm' }],
          ['message.replied', undefined, { type: 'text', text: 'Thanks!' }],
        ],
      );
      assert.equal(await tail.stop(), 0);

      const human = user.start(['messages', 'tail', '--since', '5m', '--interval', '100ms']);
      tail = human;
      const text = await until('the human lines', () => {
        const out = human.stdout();
        return out.includes('"Thanks!"') && out;
      });
      assert.match(text, new RegExp(`${id}\\s+\\+5511987654390\\s+${sender.templateName}\\s+REPLIED button "Yes, confirm"`));
      assert.match(text, /REPLIED text "Thanks!"/);
      assert.equal(await human.stop(), 0);
      tail = undefined;
    });
  });
}
