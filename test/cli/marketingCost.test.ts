import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { cliUser, type CliUser, FAST_SANDBOX } from './cli.ts';

// Issue 23 from the command line: `svc marketing-messages get|set` (the project's setting),
// the route each message took in `svc messages get` and `svc send --follow`, and
// `svc analytics cost` (table and --json) — against svc with the sandbox and its example card.

for (const kind of databaseKinds()) {
  describe(`svc marketing-messages, message routes, svc analytics cost (${kind})`, () => {
    let server: TestServer;
    let user: CliUser;
    let key: string;
    const json = async (args: string[]) => {
      const result = await user.run([...args, '--json']);
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return JSON.parse(result.stdout);
    };

    before(async () => {
      server = await startTestServer(kind, { env: FAST_SANDBOX });
      ({ key } = await server.createProject('Marketing Co'));
      const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', {
        key,
        body: { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-test-token' },
      });
      assert.equal(saved.status, 200, saved.text);
      for (const [name, category] of [['spring_sale', 'MARKETING'], ['order_update', 'UTILITY']]) {
        const created = await server.call('POST', '/v1/templates', {
          key,
          body: { name, language: 'en_US', category, components: [{ type: 'BODY', text: 'Hello {{1}}, this is for you.', example: { body_text: [['Ana']] } }] },
        });
        assert.equal(created.status, 200, created.text);
        await until(`${name} approved`, async () => (await server.call('GET', `/v1/templates/${created.body.id}`, { key })).body.status === 'APPROVED');
      }
      user = cliUser(server.url);
      user.env.SVC_API_KEY = key;
    });
    after(async () => {
      user?.remove();
      await server?.close();
    });

    it('shows and changes the Marketing Messages setting; an unknown mode is a usage error', async () => {
      assert.deepEqual(await json(['marketing-messages', 'get']), { mode: 'off' });
      assert.match((await user.run(['marketing-messages', 'get'])).stdout, /^Marketing Messages: off \(every template through Cloud API\)\.$/m);
      const wrong = await user.run(['marketing-messages', 'set', 'sometimes']);
      assert.equal(wrong.code, 2, wrong.stderr);
      assert.match(wrong.stderr, /off, fallback, strict/);
      const set = await user.run(['marketing-messages', 'set', 'fallback']);
      assert.equal(set.code, 0, set.stderr);
      assert.match(set.stdout, /Marketing Messages: fallback \(MARKETING templates through the Marketing Messages API;/);
      assert.deepEqual((await server.call('GET', '/v1/projects/me/marketing-messages', { key })).body, { mode: 'fallback' });
      assert.deepEqual(await json(['marketing-messages', 'get']), { mode: 'fallback' });
    });

    it('says which API took each message: messages get, and send --follow', async () => {
      const followed = await user.run(['send', '--to', '+5511987654321', '--template', 'spring_sale', '--language', 'en_US', '--var', '1=Ana', '--follow']);
      assert.equal(followed.code, 0, followed.stderr);
      assert.match(followed.stdout, /^ {2}via Marketing Messages API$/m);
      const id = /^(msg_\S+)/m.exec(followed.stdout)![1]!;
      const shown = await user.run(['messages', 'get', id]);
      assert.match(shown.stdout, /^ {2}route: {5}Marketing Messages API$/m);
      assert.equal((await json(['messages', 'get', id])).route, 'marketing_messages');

      const utility = await server.call('POST', '/v1/messages', { key, body: { to: '+5511987654322', template: 'order_update', language: 'en_US', variables: { '1': 'Bia' } } });
      assert.equal(utility.status, 202, utility.text);
      await waitForStatus(server, key, utility.body.id, 'READ');
      assert.match((await user.run(['messages', 'get', utility.body.id])).stdout, /^ {2}route: {5}Cloud API$/m);
    });

    it('gives the cost of delivered messages as a table with totals, and as the API’s JSON', async () => {
      const today = new Date().toISOString().slice(0, 10);
      const answer = await json(['analytics', 'cost', '--from', today, '--group-by', 'market,category']);
      assert.equal(answer.from, `${today}T00:00:00.000Z`);
      assert.deepEqual(answer.groupBy, ['market', 'category']);
      const charged = answer.totals.reduce((sum: number, total: { charged: number }) => sum + total.charged, 0);
      assert.equal(charged, 2, 'the two delivered messages are charged');
      assert.ok(answer.groups.every((group: { market: string }) => group.market === 'Brazil'));

      const text = await user.run(['analytics', 'cost', '--group-by', 'category']);
      assert.equal(text.code, 0, text.stderr);
      const lines = text.stdout.trim().split('\n');
      assert.match(lines[0]!, /^Cost of delivered messages from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2} \(exclusive\), by category:$/);
      assert.match(lines[1]!, /^CATEGORY\s+CURRENCY\s+AMOUNT\s+CHARGED\s+FREE\s+UNPRICED$/);
      assert.match(text.stdout, /^utility\s+USD\s+\d+\.\d{2,6}\s+1\s+0\s+0$/m);
      assert.match(text.stdout, /^TOTAL\s+USD\s+\d+\.\d{2,6}\s+2\s+0\s+0$/m);

      const byDay = await user.run(['analytics', 'cost']);
      assert.match(byDay.stdout, new RegExp(`^${today}\\s+USD`, 'm'), 'grouped by day by default, over the last 30 days');
      const empty = await user.run(['analytics', 'cost', '--from', '2020-01-01', '--to', '2020-01-02']);
      assert.match(empty.stdout, /^No delivered message to price from 2020-01-01 to 2020-01-02 \(exclusive\)\.$/m);
      assert.equal((await user.run(['analytics', 'cost', '--from', 'last tuesday'])).code, 2);
      const refused = await user.run(['analytics', 'cost', '--group-by', 'weather']);
      assert.equal(refused.code, 1, 'svc refuses an unknown key (422)');
    });
  });
}
