import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { runSvc } from '../support/process.ts';
import { approvedTemplate, BODY_TEXT, sendBody, senderAt } from '../support/sending.ts';
import { startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from '../support/server.ts';
import { writeGate } from '../support/writeGate.ts';

// POST /v1/messages remembers which project a key hash belongs to and what it last read of a
// project's template (issue #11). Nothing remembered may change an answer: a revoked key is 401
// at once, in flight too and whatever else is wrong with the request; a template approved,
// deleted or registered again — in this process or another — is what the next send sees; and
// another project's key or template is never used. Each test first sends once, so what it then
// changes is remembered by the process that answers.

const REVOKED = 'The API key is unknown or revoked.';
const DISABLED = 'This project is disabled; contact the operator.';

for (const kind of databaseKinds()) {
  describe(`request-path caches (${kind})`, () => {
    let server: TestServer;
    let other: TestServer;
    before(async () => {
      server = await startTestServer(kind, { env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' } });
      // A second API process on the same database: changes made there must be seen here at once.
      other = await startTestServer(kind, { database: server.database, env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' } });
    });
    after(async () => {
      await other.app.stop();
      await server.close();
    });

    const send = (target: TestServer, key: string, body: unknown, headers?: Record<string, string>) =>
      target.call('POST', '/v1/messages', { key, body, ...(headers && { headers }) });
    const messageCount = async (projectId: string) =>
      (await server.app.database.db.selectFrom('messages').select('id').where('project_id', '=', projectId).execute()).length;

    describe('keys', () => {
      it('a key revoked (here or in another process) is 401 at once, whatever else the request holds', async () => {
        for (const revoker of [server, other]) {
          const sender = await senderAt(server.url);
          const spare = (await server.call('POST', '/v1/api-keys', { key: sender.key, body: { name: 'spare' } })).body;
          const spareSender = { ...sender, key: spare.key };
          assert.equal((await send(server, spare.key, sendBody(spareSender), { 'idempotency-key': 'first' })).status, 202);
          const before = await messageCount(sender.projectId);

          const revoked = await revoker.call('DELETE', `/v1/api-keys/${spare.id}`, { key: sender.key });
          assert.equal(revoked.status, 200);

          const attempts: [string, unknown, Record<string, string>?][] = [
            ['a valid send', sendBody(spareSender)],
            ['the replay of its earlier send', sendBody(spareSender), { 'idempotency-key': 'first' }],
            ['an invalid body', { to: 'nope' }],
            ['an unknown template', { ...sendBody(spareSender), template: 'nothing_here' }],
          ];
          for (const [what, body, headers] of attempts) {
            const reply = await send(server, spare.key, body, headers);
            assert.equal(reply.status, 401, `${what}: ${reply.text}`);
            assert.equal(reply.body.code, 'unauthorized');
            assert.equal(reply.body.detail, REVOKED);
            assert.equal(reply.headers.get('www-authenticate'), 'Bearer');
          }
          const bad = await server.call('POST', '/v1/messages', {
            key: spare.key,
            raw: '{not json',
            headers: { 'content-type': 'application/json' },
          });
          assert.equal(bad.status, 401, 'malformed JSON');
          assert.equal(await messageCount(sender.projectId), before);
          // The project's other key still sends.
          assert.equal((await send(server, sender.key, sendBody(sender))).status, 202);
        }
      });

      it('a key revoked while its send is in flight gets 401 and nothing is written', async () => {
        const gate = writeGate('/v1/messages');
        const paused = await startTestServer(kind, { database: server.database, testHooks: gate.hooks });
        try {
          const sender = await senderAt(paused.url);
          const spare = (await paused.call('POST', '/v1/api-keys', { key: sender.key, body: { name: 'spare' } })).body;
          const spareSender = { ...sender, key: spare.key };
          assert.equal((await send(paused, spare.key, sendBody(spareSender))).status, 202);
          const before = await messageCount(sender.projectId);
          gate.arm();
          const inFlight = send(paused, spare.key, sendBody(spareSender));
          await gate.atWrite;
          assert.equal((await server.call('DELETE', `/v1/api-keys/${spare.id}`, { key: sender.key })).status, 200);
          gate.release();
          const late = await inFlight;
          assert.equal(late.status, 401, late.text);
          assert.equal(late.body.code, 'unauthorized');
          assert.equal(await messageCount(sender.projectId), before);
        } finally {
          await paused.app.stop();
        }
      });

      it('a project disabled by the operator is 401 with its reason at once', async () => {
        const sender = await senderAt(server.url);
        assert.equal((await send(server, sender.key, sendBody(sender))).status, 202);
        const svc = (...args: string[]) =>
          runSvc(['projects', ...args], { SVC_DATABASE_URL: server.database.url, SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
        assert.equal((await svc('disable', sender.projectId)).code, 0);
        for (const body of [sendBody(sender), { to: 'nope' }]) {
          const reply = await send(server, sender.key, body);
          assert.equal(reply.status, 401, reply.text);
          assert.equal(reply.body.detail, DISABLED);
        }
        assert.equal((await svc('enable', sender.projectId)).code, 0);
        assert.equal((await send(server, sender.key, sendBody(sender))).status, 202);
      });

      // GET /v1/messages/{id}, the list and the events read the key in the statement that reads
      // the messages: a key this process remembers must still be refused at once.
      it('the message reads refuse a remembered key at once once it is revoked (here or elsewhere) or its project disabled', async () => {
        const svc = (...args: string[]) =>
          runSvc(['projects', ...args], { SVC_DATABASE_URL: server.database.url, SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
        for (const change of ['revoked here', 'revoked elsewhere', 'disabled'] as const) {
          const sender = await senderAt(server.url);
          const spare = (await server.call('POST', '/v1/api-keys', { key: sender.key, body: { name: 'spare' } })).body;
          const sent = await send(server, spare.key, sendBody({ ...sender, key: spare.key }));
          assert.equal(sent.status, 202, sent.text);
          const reads = [
            `/v1/messages/${sent.body.id}`,
            '/v1/messages?limit=5',
            '/v1/messages?status=QUEUED&limit=1',
            `/v1/messages/${sent.body.id}/events`,
            '/v1/messages/msg_no_such_message',
            '/v1/messages?cursor=not-a-cursor',
          ];
          const expected = [200, 200, 200, 200, 404, 400];
          for (const [i, path] of reads.entries()) {
            assert.equal((await server.call('GET', path, { key: spare.key })).status, expected[i], `${path} before: remembered now`);
          }
          if (change === 'disabled') assert.equal((await svc('disable', sender.projectId)).code, 0);
          else {
            const revoker = change === 'revoked here' ? server : other;
            assert.equal((await revoker.call('DELETE', `/v1/api-keys/${spare.id}`, { key: sender.key })).status, 200);
          }
          for (const path of reads) {
            const reply = await server.call('GET', path, { key: spare.key });
            assert.equal(reply.status, 401, `${change}, ${path}: ${reply.text}`);
            assert.equal(reply.body.detail, change === 'disabled' ? DISABLED : REVOKED);
          }
          if (change === 'disabled') {
            assert.equal((await svc('enable', sender.projectId)).code, 0);
            assert.equal((await server.call('GET', reads[0]!, { key: spare.key })).status, 200);
          } else {
            // The project's other key still reads it.
            const mine = await server.call('GET', reads[0]!, { key: sender.key });
            assert.equal(mine.status, 200);
            assert.equal(mine.body.id, sent.body.id);
          }
        }
      });

      it("the message reads answer from the key's own project only", async () => {
        const alice = await senderAt(server.url);
        const bob = await senderAt(server.url);
        const alices = (await send(server, alice.key, sendBody(alice))).body.id;
        const bobs = (await send(server, bob.key, sendBody(bob))).body.id;
        for (let round = 0; round < 2; round++) {
          assert.equal((await server.call('GET', `/v1/messages/${alices}`, { key: bob.key })).status, 404);
          assert.equal((await server.call('GET', `/v1/messages/${alices}/events`, { key: bob.key })).status, 404);
          const list = await server.call('GET', '/v1/messages?limit=200', { key: bob.key });
          assert.deepEqual(
            list.body.map((message: { id: string }) => message.id),
            [bobs],
          );
        }
        const empty = await senderAt(server.url);
        for (let round = 0; round < 2; round++) {
          const none = await server.call('GET', '/v1/messages', { key: empty.key });
          assert.equal(none.status, 200);
          assert.deepEqual(none.body, []);
          assert.equal(none.headers.get('link'), null);
        }
      });

      it("sends with the key's own project, never another's", async () => {
        const alice = await senderAt(server.url, { templateName: 'shared_name' });
        const bob = await senderAt(server.url, { templateName: 'shared_name', bodyText: 'Bob says {{1}} and {{2}} here.' });
        for (let round = 0; round < 2; round++) {
          for (const sender of [alice, bob]) {
            const reply = await send(server, sender.key, sendBody(sender));
            assert.equal(reply.status, 202, reply.text);
            const row = await server.app.database.db
              .selectFrom('messages')
              .select(['project_id', 'template_id'])
              .where('id', '=', reply.body.id)
              .executeTakeFirstOrThrow();
            assert.deepEqual({ ...row }, { project_id: sender.projectId, template_id: sender.templateId });
          }
        }
        assert.match((await send(server, bob.key, sendBody(bob))).body.content.body, /^Bob says/);
      });
    });

    describe('templates', () => {
      it('a template deleted, registered again and approved is seen by the next send, in every process', async () => {
        for (const changer of [server, other]) {
          const sender = await senderAt(server.url, { templateName: 'renewed' });
          assert.equal((await send(server, sender.key, sendBody(sender))).status, 202);

          assert.equal((await changer.call('DELETE', `/v1/templates/${sender.templateId}`, { key: sender.key })).status, 200);
          const gone = await send(server, sender.key, sendBody(sender));
          assert.equal(gone.status, 422, gone.text);
          assert.equal(gone.body.code, 'template_not_found');

          // Registered again, with three variables now: PENDING until approved.
          const text = 'Hi {{1}}, order {{2}} ships on {{3}}.';
          const created = await changer.call('POST', '/v1/templates', {
            key: sender.key,
            body: { name: 'renewed', language: sender.language, category: 'UTILITY', components: [{ type: 'BODY', text }] },
          });
          assert.equal(created.status, 200, created.text);
          const pending = await send(server, sender.key, sendBody(sender));
          assert.equal(pending.status, 422);
          assert.equal(pending.body.code, 'template_not_approved');

          const reviewed = await changer.call('POST', `/v1/test-helpers/templates/${created.body.id}/review`, {
            key: sender.key,
            body: { status: 'APPROVED' },
          });
          assert.equal(reviewed.status, 200);
          const mismatch = await send(server, sender.key, sendBody(sender));
          assert.equal(mismatch.status, 422);
          assert.equal(mismatch.body.code, 'template_variables_mismatch');
          const sent = await send(server, sender.key, { ...sendBody(sender), variables: { '1': 'Ana', '2': 'A-1', '3': 'Monday' } });
          assert.equal(sent.status, 202, sent.text);
          assert.equal(sent.body.content.body, 'Hi Ana, order A-1 ships on Monday.');
        }
      });

      it('a template rejected after a send, or approved after a refusal, is seen by the next send', async () => {
        const sender = await senderAt(server.url);
        const created = await server.call('POST', '/v1/templates', {
          key: sender.key,
          body: { name: 'late_review', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: BODY_TEXT }] },
        });
        const body = { ...sendBody(sender), template: 'late_review', language: 'en' };
        const refused = await send(server, sender.key, body);
        assert.equal(refused.body.code, 'template_not_approved');
        await other.call('POST', `/v1/test-helpers/templates/${created.body.id}/review`, { key: sender.key, body: { status: 'APPROVED' } });
        assert.equal((await send(server, sender.key, body)).status, 202);

        // A template another language of which is registered elsewhere: the mismatch names both.
        const mismatch = await send(server, sender.key, { ...body, language: 'pt_BR' });
        assert.equal(mismatch.body.code, 'template_language_mismatch');
        await approvedTemplate(other, sender.key, 'late_review', 'pt_BR');
        assert.equal((await send(server, sender.key, { ...body, language: 'pt_BR' })).status, 202);
      });

      it('credentials saved after a refusal are seen by the next send', async () => {
        const { key, projectId } = await server.createProject();
        await approvedTemplate(server, key, 'order_update', 'en_US');
        const sender = { projectId, key, templateName: 'order_update', language: 'en_US' };
        const refused = await send(server, key, sendBody(sender));
        assert.equal(refused.status, 422);
        assert.equal(refused.body.code, 'provider_not_configured');
        const saved = await other.call('PUT', '/v1/projects/me/provider-credentials', {
          key,
          body: { providerPhoneNumberId: '1065550009', providerAccessToken: 'EAAG-test' },
        });
        assert.equal(saved.status, 200);
        assert.equal((await send(server, key, sendBody(sender))).status, 202);
      });
    });

    describe('the 202 and the history', () => {
      it('the QUEUED event is derived from the message row, none is stored', async () => {
        const sender = await senderAt(server.url);
        const accepted = await send(server, sender.key, sendBody(sender));
        assert.equal(accepted.status, 202, accepted.text);
        const events = await server.call('GET', `/v1/messages/${accepted.body.id}/events`, { key: sender.key });
        assert.equal(events.status, 200);
        assert.deepEqual(events.body[0], {
          id: `evt_${accepted.body.id.slice('msg_'.length)}`,
          status: 'QUEUED',
          event: null,
          occurredAt: accepted.body.queuedAt,
          deliveries: [],
        });
        const stored = await server.app.database.db
          .selectFrom('message_events')
          .select('id')
          .where('project_id', '=', sender.projectId)
          .where('status', '=', 'QUEUED')
          .execute();
        assert.deepEqual(stored, [], 'one write per accepted message: no QUEUED row');
      });
    });
  });
}
