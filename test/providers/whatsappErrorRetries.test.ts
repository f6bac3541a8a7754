import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { type FakeGraphApi, graphError } from '../support/fakeGraphApi.ts';
import { waitForStatus } from '../support/sending.ts';
import type { TestServer } from '../support/server.ts';
import { connectedProject, startWhatsApp, until, type WhatsAppSetup } from '../support/whatsapp.ts';
import { approvedWhatsAppTemplate, messageRow, sendTemplate } from '../support/whatsappSending.ts';

// Meta's 2025–2026 error codes at submission, through the dispatcher to the message: the wait
// Meta asks for becomes the message's next due time, never the next step of the backoff.

const HOUR = 3600_000;

for (const kind of databaseKinds()) {
  describe(`WhatsApp error codes at submission (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;

    before(async () => {
      setup = await startWhatsApp(kind);
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
      await approvedWhatsAppTemplate(server, fake, key, 'spring_sale', 'MARKETING');
    });
    after(() => setup.close());

    /** The message once its first submission is recorded (attempts 1). */
    async function afterFirstAnswer(id: string) {
      return until(`the first answer to ${id}`, async () => {
        const row = await messageRow(server, id);
        return row.attempts >= 1 ? row : undefined;
      });
    }

    it('131049 (per-user marketing limit) waits at least 24 hours before the next try', async () => {
      fake.failNext('send', graphError(400, 131049, 'This message was not delivered to maintain healthy ecosystem engagement.', 'Meta chose not to deliver.'));
      const sentBefore = fake.sends().length;
      const startedAt = Date.now();
      const id = await sendTemplate(server, key, 'spring_sale', '+5511987650001');
      const row = await afterFirstAnswer(id);
      assert.equal(row.status, 'QUEUED');
      assert.ok(row.due_at! >= startedAt + 24 * HOUR, `due ${row.due_at! - startedAt} ms later`);
      assert.ok(row.due_at! < startedAt + 25 * HOUR, 'not much later either');
      assert.equal(fake.sends().length - sentBefore, 1, 'tried once');
    });

    it('134101 (template still syncing for the Marketing Messages API) waits at least 10 minutes', async () => {
      fake.failNext('send', graphError(400, 134101, 'Your template is still syncing', 'Wait a few minutes, and then try sending your message again.'));
      const startedAt = Date.now();
      const id = await sendTemplate(server, key, 'spring_sale', '+5511987650002');
      const row = await afterFirstAnswer(id);
      assert.equal(row.status, 'QUEUED');
      assert.ok(row.due_at! >= startedAt + 10 * 60_000, `due ${row.due_at! - startedAt} ms later`);
      assert.ok(row.due_at! < startedAt + HOUR);
    });

    it('131050 (the user stopped marketing messages) fails the message and suppresses the number for MARKETING templates only', async () => {
      await approvedWhatsAppTemplate(server, fake, key, 'order_update_131050', 'UTILITY');
      const to = '+5511987659050';
      fake.failNext('send', graphError(400, 131050, 'User has stopped receipt of marketing messages.', 'Unable to deliver the message.'));
      const id = await sendTemplate(server, key, 'spring_sale', to);
      assert.equal((await waitForStatus(server, key, id, 'FAILED')).error.code, '131050');
      const listed = (await server.call('GET', '/v1/suppressions', { key })).body as any[];
      const entry = listed.find((suppression) => suppression.phoneNumber === to);
      assert.ok(entry, JSON.stringify(listed));
      assert.equal(entry.scope, 'marketing');
      assert.equal(entry.source, 'marketing_opt_out');
      const marketing = await server.call('POST', '/v1/messages', { key, body: { to, template: 'spring_sale', language: 'en_US', variables: { '1': 'Ana', '2': 'A-1' } } });
      assert.equal(marketing.status, 422, marketing.text);
      assert.equal(marketing.body.code, 'recipient_suppressed');
      const utility = await server.call('POST', '/v1/messages', { key, body: { to, template: 'order_update_131050', language: 'en_US', variables: { '1': 'Ana', '2': 'A-1' } } });
      assert.equal(utility.status, 202, utility.text);
      await waitForStatus(server, key, utility.body.id, 'SENT');
    });

    it('131057 (account in maintenance, HTTP 500, during a throughput upgrade) is retried soon and goes through', async () => {
      fake.failNext('send', graphError(500, 131057, 'Account in maintenance mode', 'Business Account is in maintenance mode'));
      const sentBefore = fake.sends().length;
      const id = await sendTemplate(server, key, 'spring_sale', '+5511987650003');
      await waitForStatus(server, key, id, 'SENT');
      assert.equal(fake.sends().length - sentBefore, 2);
    });

    for (const [code, status, title] of [
      [130472, 400, 'User’s number is part of an experiment'],
      [131050, 400, 'User has stopped receipt of marketing messages.'],
      [131062, 400, 'Business-scoped user id given for an authentication template'],
      [135000, 400, 'Generic user error'],
      [132015, 400, 'Template is Paused'],
      [134102, 500, 'Template unavailable for use'],
      [131055, 400, 'Method not allowed'],
      [134100, 400, 'Only marketing messages supported'],
    ] as const) {
      it(`${code} fails the message at once with Meta’s code, never retried`, async () => {
        fake.failNext('send', graphError(status, code, title, `details of ${code}`));
        const sentBefore = fake.sends().length;
        const id = await sendTemplate(server, key, 'spring_sale', `+551198765${String(code).slice(-4)}`);
        const failed = await waitForStatus(server, key, id, 'FAILED');
        assert.equal(failed.error.code, String(code));
        // 131062 says the way out too: authentication templates go to the phone number.
        if (code === 131062) assert.match(failed.error.message, /^details of 131062 Authentication templates .* go to phone numbers only/);
        else assert.equal(failed.error.message, `details of ${code}`);
        assert.equal((await messageRow(server, id)).attempts, 1);
        assert.equal(fake.sends().length - sentBefore, 1);
      });
    }
  });
}
