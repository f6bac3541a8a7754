import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';
import { nextPageOf } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { approvedTemplate, createSender, type Sender, sendBody, waitForStatus } from '../support/sending.ts';
import { until } from '../support/until.ts';

const FAST = {
  SVC_SANDBOX_DELIVERY_DELAY_MS: '30',
  SVC_SANDBOX_READ_DELAY_MS: '30',
  SVC_SANDBOX_REVIEW_DELAY_MS: '3600000',
};
const NUMBER = '+5511987650001';
const path = (number: string) => `/v1/suppressions/${encodeURIComponent(number)}`;

for (const kind of databaseKinds()) {
  describe(`suppressions (${kind})`, () => {
    let server: TestServer;
    let sender: Sender;
    before(async () => {
      server = await startTestServer(kind, { env: { ...FAST, SVC_AUTO_SUPPRESS: 'true' } });
      sender = await createSender(server);
    });
    after(() => server.close());

    it('add, read, list, send refused, delete, send again', async () => {
      const created = await server.call('POST', '/v1/suppressions', { key: sender.key, body: { phoneNumber: NUMBER, reason: 'Replied STOP' } });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(Object.keys(created.body).sort(), ['createdAt', 'phoneNumber', 'reason', 'scope', 'source']);
      assert.equal(created.body.source, 'api');
      assert.equal(created.body.scope, 'all');
      assert.equal(created.body.reason, 'Replied STOP');
      const again = await server.call('POST', '/v1/suppressions', { key: sender.key, body: { phoneNumber: NUMBER, reason: 'other' } });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, created.body, 'the existing record, unchanged');

      assert.deepEqual((await server.call('GET', path(NUMBER), { key: sender.key })).body, created.body);
      assert.deepEqual((await server.call('GET', '/v1/suppressions', { key: sender.key })).body, [created.body]);

      const refused = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, NUMBER) });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.code, 'recipient_suppressed');
      assert.equal(refused.body.errors[0].field, '/to');
      const scheduled = await server.call('POST', '/v1/messages', {
        key: sender.key,
        body: { ...sendBody(sender, NUMBER), sendAt: new Date(Date.now() + 60_000).toISOString() },
      });
      assert.equal(scheduled.status, 422);
      assert.equal(scheduled.body.code, 'recipient_suppressed');
      assert.equal((await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, '+5511987650002') })).status, 202);

      const deleted = await server.call('DELETE', path(NUMBER), { key: sender.key });
      assert.equal(deleted.status, 204);
      assert.equal((await server.call('DELETE', path(NUMBER), { key: sender.key })).status, 404);
      assert.equal((await server.call('GET', path(NUMBER), { key: sender.key })).status, 404);
      assert.equal((await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, NUMBER) })).status, 202);
    });

    it('is per project: another project neither sees nor is bound by the list', async () => {
      await server.call('POST', '/v1/suppressions', { key: sender.key, body: { phoneNumber: '+5511987650003' } });
      const other = await createSender(server, 'other_template');
      assert.equal((await server.call('GET', path('+5511987650003'), { key: other.key })).status, 404);
      assert.equal((await server.call('DELETE', path('+5511987650003'), { key: other.key })).status, 404);
      assert.deepEqual((await server.call('GET', '/v1/suppressions', { key: other.key })).body, []);
      assert.equal((await server.call('POST', '/v1/messages', { key: other.key, body: sendBody(other, '+5511987650003') })).status, 202);
      assert.equal((await server.call('GET', path('+5511987650003'), { key: sender.key })).status, 200);
      assert.equal((await server.call('GET', '/v1/suppressions', {})).status, 401);
    });

    it('refuses what is not an E.164 number, and pages newest first', async () => {
      for (const phoneNumber of ['5511987650001', '+12', 'x']) {
        const reply = await server.call('POST', '/v1/suppressions', { key: sender.key, body: { phoneNumber } });
        assert.equal(reply.status, 400, reply.text);
        assert.equal(reply.body.errors[0].field, '/phoneNumber');
      }
      assert.equal((await server.call('GET', '/v1/suppressions/abc', { key: sender.key })).status, 400);
      assert.equal((await server.call('POST', '/v1/suppressions', { key: sender.key, body: { phoneNumber: NUMBER, extra: 1 } })).status, 400);
      const own = await createSender(server, 'paging_template');
      for (let i = 0; i < 3; i++) await server.call('POST', '/v1/suppressions', { key: own.key, body: { phoneNumber: `+551198765010${i}` } });
      const page = await server.call('GET', '/v1/suppressions?limit=2', { key: own.key });
      assert.deepEqual(page.body.map((row: any) => row.phoneNumber), ['+5511987650102', '+5511987650101']);
      const rest = await server.call('GET', nextPageOf(page)!, { key: own.key });
      assert.deepEqual(rest.body.map((row: any) => row.phoneNumber), ['+5511987650100']);
    });

    it('a message FAILED as undeliverable (131026) puts its number on the list, source provider', async () => {
      const failed = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, '+15550000001') });
      await waitForStatus(server, sender.key, failed.body.id, 'FAILED');
      const record = await until('the number suppressed', async () => {
        const reply = await server.call('GET', path('+15550000001'), { key: sender.key });
        return reply.status === 200 && reply.body;
      });
      assert.equal(record.source, 'provider');
      assert.match(record.reason, /131026/);
      const refused = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, '+15550000001') });
      assert.equal(refused.body.code, 'recipient_suppressed');
    });

    it('the template preview renders with the send’s rules', async () => {
      const templateId = await approvedTemplate(server, sender.key, 'preview_me', 'pt_BR', [
        { type: 'HEADER', format: 'TEXT', text: 'Pedido {{1}}' },
        { type: 'BODY', text: 'Olá {{1}}, seu pedido {{2}} chegou.' },
        { type: 'FOOTER', text: 'Loja' },
      ]);
      const preview = await server.call('POST', `/v1/templates/${templateId}/preview`, {
        key: sender.key,
        body: { variables: { '1': 'Ana', '2': '#7' }, headerVariables: { '1': '#7' } },
      });
      assert.equal(preview.status, 200, preview.text);
      assert.deepEqual(preview.body, { header: 'Pedido #7', body: 'Olá Ana, seu pedido #7 chegou.', footer: 'Loja' });

      const mismatch = await server.call('POST', `/v1/templates/${templateId}/preview`, { key: sender.key, body: { variables: { '1': 'Ana' } } });
      assert.equal(mismatch.status, 422);
      assert.equal(mismatch.body.code, 'template_variables_mismatch');
      const send = await server.call('POST', '/v1/messages', {
        key: sender.key,
        body: { to: NUMBER, template: 'preview_me', language: 'pt_BR', variables: { '1': 'Ana' } },
      });
      assert.equal(send.body.detail, mismatch.body.detail, 'the same error a send gives');
      const blank = await server.call('POST', `/v1/templates/${templateId}/preview`, {
        key: sender.key,
        body: { variables: { '1': 'a\nb', '2': 'x' }, headerVariables: { '1': '#7' } },
      });
      assert.equal(blank.status, 400);
      assert.equal(blank.body.errors[0].field, '/variables/1');
      const other = await createSender(server, 'preview_other');
      assert.equal((await server.call('POST', `/v1/templates/${templateId}/preview`, { key: other.key, body: {} })).status, 404);
    });
  });

  describe(`suppressions across processes (${kind})`, () => {
    it('a number suppressed through one process is refused by the next send of another', async () => {
      const database = await createTestDatabase(kind);
      const one = await startTestServer(kind, { env: FAST, database });
      const two = await startTestServer(kind, { env: FAST, database });
      try {
        const sender = await createSender(one);
        // Process two remembers the project without suppressions.
        assert.equal((await two.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, NUMBER) })).status, 202);
        assert.equal((await one.call('POST', '/v1/suppressions', { key: sender.key, body: { phoneNumber: NUMBER } })).status, 201);
        const refused = await two.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, NUMBER) });
        assert.equal(refused.status, 422, refused.text);
        assert.equal(refused.body.code, 'recipient_suppressed');
        const batch = await two.call('POST', '/v1/messages/batch', {
          key: sender.key,
          body: { template: sender.templateName, language: sender.language, items: [{ to: NUMBER, variables: { '1': 'A', '2': 'B' } }] },
        });
        assert.equal(batch.body.items[0].error.code, 'recipient_suppressed');
        assert.equal((await one.call('DELETE', path(NUMBER), { key: sender.key })).status, 204);
        assert.equal((await two.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, NUMBER) })).status, 202);
      } finally {
        await one.close();
        await two.close();
        await database.drop();
      }
    });

    it('by default (SVC_AUTO_SUPPRESS unset) a failed message leaves the list alone: the sandbox\'s magic number fails again and again', async () => {
      const server = await startTestServer(kind, { env: FAST });
      try {
        const sender = await createSender(server);
        const failed = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, '+15550000001') });
        await waitForStatus(server, sender.key, failed.body.id, 'FAILED');
        assert.equal((await server.call('GET', path('+15550000001'), { key: sender.key })).status, 404);
        const again = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, '+15550000001') });
        assert.equal(again.status, 202, again.text);
        await waitForStatus(server, sender.key, again.body.id, 'FAILED');
      } finally {
        await server.close();
      }
    });
  });
}
