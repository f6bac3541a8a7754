import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { nextPageOf } from '../support/http.ts';
import { approvedTemplate, createSender, type Sender, sendBody, waitForStatus } from '../support/sending.ts';

const FAST = {
  SVC_SANDBOX_DELIVERY_DELAY_MS: '30',
  SVC_SANDBOX_READ_DELAY_MS: '30',
  SVC_SANDBOX_REVIEW_DELAY_MS: '3600000',
  SVC_SEND_RETRY_SCHEDULE: '20ms,20ms,20ms',
};
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

for (const kind of databaseKinds()) {
  describe(`messages (${kind})`, () => {
    let server: TestServer;
    let sender: Sender;
    before(async () => {
      server = await startTestServer(kind, { env: FAST });
      sender = await createSender(server);
    });
    after(() => server.close());

    describe('POST /v1/messages — happy path', () => {
      it('answers 202 QUEUED and the message walks to READ', async () => {
        const reply = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
        assert.equal(reply.status, 202, reply.text);
        const message = reply.body;
        assert.match(message.id, /^msg_[0-9a-z]{26}$/);
        assert.equal(message.status, 'QUEUED');
        assert.equal(message.to, '+5511987654321');
        assert.equal(message.template, 'order_update');
        assert.equal(message.language, 'en_US');
        assert.match(message.queuedAt, ISO_MS);
        assert.deepEqual(message.variables, { '1': 'Ana', '2': 'A-1001' });
        assert.equal(message.content.body, 'Hello Ana, your order A-1001 has shipped today.');
        assert.equal(message.sentAt, null);

        const read = await waitForStatus(server, sender.key, message.id, 'READ');
        assert.match(read.sentAt, ISO_MS);
        assert.match(read.deliveredAt, ISO_MS);
        assert.match(read.readAt, ISO_MS);
        assert.equal(read.failedAt, null);
        assert.match(read.providerMessageId, /^wamid\./);
        assert.equal(read.queuedAt, message.queuedAt);

        const events = await server.call('GET', `/v1/messages/${message.id}/events`, { key: sender.key });
        assert.equal(events.status, 200);
        assert.deepEqual(
          events.body.map((event: any) => event.status),
          ['QUEUED', 'SENT', 'DELIVERED', 'READ'],
        );
        assert.deepEqual(
          events.body.map((event: any) => event.event),
          [null, 'message.sent', 'message.delivered', 'message.read'],
        );
      });

      it('renders header and footer, and takes headerVariables', async () => {
        await approvedTemplate(server, sender.key, 'with_header', 'pt_BR', [
          { type: 'HEADER', format: 'TEXT', text: 'Pedido {{1}}' },
          { type: 'BODY', text: 'Olá {{1}}, seu pedido chegou hoje.' },
          { type: 'FOOTER', text: 'Loja Exemplo' },
        ]);
        const reply = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: {
            to: '+5511987654321',
            template: 'with_header',
            language: 'pt_BR',
            variables: { '1': 'Ana' },
            headerVariables: { '1': '#42' },
          },
        });
        assert.equal(reply.status, 202, reply.text);
        assert.deepEqual(reply.body.content, {
          header: 'Pedido #42',
          body: 'Olá Ana, seu pedido chegou hoje.',
          footer: 'Loja Exemplo',
        });
      });
    });

    describe('POST /v1/messages — errors', () => {
      it('400 for malformed requests, naming each field', async () => {
        const good = sendBody(sender);
        const cases: [unknown, string][] = [
          [{ ...good, to: undefined }, '/to'],
          [{ ...good, to: '5511987654321' }, '/to'],
          [{ ...good, to: '+1 415 555 2671' }, '/to'],
          [{ ...good, to: '+99912345678' }, '/to'],
          [{ ...good, to: 14155552671 }, '/to'],
          [{ ...good, template: undefined }, '/template'],
          [{ ...good, language: undefined }, '/language'],
          [{ ...good, variables: { '0': 'x' } }, '/variables'],
          [{ ...good, variables: { one: 'x' } }, '/variables'],
          [{ ...good, variables: { '1': '' } }, '/variables/1'],
          [{ ...good, variables: { '1': 5 } }, '/variables/1'],
          [{ ...good, variables: { '1': 'a\nb', '2': 'x' } }, '/variables/1'],
          [{ ...good, variables: { '1': 'a      b', '2': 'x' } }, '/variables/1'],
          [{ ...good, variables: ['Ana'] }, '/variables'],
          [{ ...good, priority: 'high' }, '/priority'],
        ];
        for (const [body, field] of cases) {
          const reply = await server.call('POST', '/v1/messages', { key: sender.key, body });
          assert.equal(reply.status, 400, `${JSON.stringify(body)} → ${reply.text}`);
          assert.equal(reply.body.code, 'validation_failed');
          assert.ok(
            reply.body.errors.some((error: any) => error.field.startsWith(field)),
            `${JSON.stringify(body)} → ${JSON.stringify(reply.body.errors)}`,
          );
        }
      });

      it('415 without a JSON body', async () => {
        const reply = await server.call('POST', '/v1/messages', {
          key: sender.key,
          raw: 'to=+5511987654321',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        assert.equal(reply.status, 415);
      });

      it('422 template_not_found for an unknown or differently cased name', async () => {
        for (const template of ['nope', 'ORDER_UPDATE']) {
          const reply = await server.call('POST', '/v1/messages', {
            key: sender.key,
            body: { ...sendBody(sender), template },
          });
          assert.equal(reply.status, 422);
          assert.equal(reply.body.code, 'template_not_found');
        }
      });

      it('422 template_language_mismatch naming the languages that exist, and no message', async () => {
        const before = await server.call('GET', '/v1/messages?limit=200', { key: sender.key });
        const reply = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: { ...sendBody(sender), language: 'pt_BR' },
        });
        assert.equal(reply.status, 422);
        assert.equal(reply.body.code, 'template_language_mismatch');
        assert.match(reply.body.detail, /en_US/);
        const afterwards = await server.call('GET', '/v1/messages?limit=200', { key: sender.key });
        assert.equal(afterwards.body.length, before.body.length);
      });

      it('422 template_not_approved for PENDING and REJECTED templates', async () => {
        const pending = await server.call('POST', '/v1/templates', {
          key: sender.key,
          body: { name: 'still_pending', language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi there friend' }] },
        });
        assert.equal(pending.status, 200);
        const reply = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: { to: '+5511987654321', template: 'still_pending', language: 'en_US' },
        });
        assert.equal(reply.status, 422);
        assert.equal(reply.body.code, 'template_not_approved');
        assert.match(reply.body.detail, /PENDING/);

        const rejected = await server.call('POST', '/v1/templates', {
          key: sender.key,
          body: { name: 'gets_rejected', language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi there friend' }] },
        });
        await server.call('POST', `/v1/test-helpers/templates/${rejected.body.id}/review`, {
          key: sender.key,
          body: { status: 'REJECTED', reason: 'test' },
        });
        const refused = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: { to: '+5511987654321', template: 'gets_rejected', language: 'en_US' },
        });
        assert.equal(refused.status, 422);
        assert.equal(refused.body.code, 'template_not_approved');
        assert.match(refused.body.detail, /REJECTED/);
      });

      it('422 template_variables_mismatch naming expected and given', async () => {
        for (const variables of [{}, { '1': 'Ana' }, { '1': 'Ana', '2': 'x', '3': 'y' }, { '1': 'Ana', '3': 'x' }]) {
          const reply = await server.call('POST', '/v1/messages', {
            key: sender.key,
            body: { ...sendBody(sender), variables },
          });
          assert.equal(reply.status, 422, JSON.stringify(variables));
          assert.equal(reply.body.code, 'template_variables_mismatch');
          assert.match(reply.body.detail, /needs variables "1", "2"/);
        }
        const header = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: { ...sendBody(sender), headerVariables: { '1': 'x' } },
        });
        assert.equal(header.status, 422);
        assert.equal(header.body.code, 'template_variables_mismatch');
      });

      it('422 provider_not_configured before credentials are saved', async () => {
        const { key } = await server.createProject();
        await approvedTemplate(server, key, 'order_update', 'en_US');
        const reply = await server.call('POST', '/v1/messages', {
          key,
          body: { to: '+5511987654321', template: 'order_update', language: 'en_US' },
        });
        assert.equal(reply.status, 422);
        assert.equal(reply.body.code, 'provider_not_configured');
      });
    });

    describe('idempotency', () => {
      it('replays the original answer for the same key and body', async () => {
        const headers = { 'idempotency-key': `order-${Date.now()}` };
        const first = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender), headers });
        assert.equal(first.status, 202);
        assert.equal(first.headers.get('idempotent-replayed'), null);
        await waitForStatus(server, sender.key, first.body.id, 'READ');
        const again = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: { variables: { '2': 'A-1001', '1': 'Ana' }, language: 'en_US', template: 'order_update', to: '+5511987654321' },
          headers: { 'idempotency-key': `"${headers['idempotency-key']}"` },
        });
        assert.equal(again.status, 202);
        assert.equal(again.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(again.body, first.body);
      });

      it('422 idempotency_key_reused for the same key with another body', async () => {
        const headers = { 'idempotency-key': `reuse-${Date.now()}` };
        assert.equal((await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender), headers })).status, 202);
        const reused = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: sendBody(sender, '+5511900000000'),
          headers,
        });
        assert.equal(reused.status, 422);
        assert.equal(reused.body.code, 'idempotency_key_reused');
      });

      it('keys are per project', async () => {
        const other = await createSender(server, 'order_update', 'en_US');
        const headers = { 'idempotency-key': `shared-${Date.now()}` };
        const mine = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender), headers });
        const theirs = await server.call('POST', '/v1/messages', { key: other.key, body: sendBody(other), headers });
        assert.equal(theirs.status, 202);
        assert.notEqual(theirs.body.id, mine.body.id);
        assert.equal(theirs.headers.get('idempotent-replayed'), null);
      });

      it('20 concurrent duplicates create exactly one message', async () => {
        const headers = { 'idempotency-key': `burst-${Date.now()}` };
        const to = '+5511911112222';
        const replies = await Promise.all(
          Array.from({ length: 20 }, () => server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender, to), headers })),
        );
        const ids = new Set(replies.filter((reply) => reply.status === 202).map((reply) => reply.body.id));
        assert.equal(ids.size, 1);
        for (const reply of replies) assert.ok([202, 409].includes(reply.status), reply.text);
        for (const reply of replies.filter((r) => r.status === 409)) {
          assert.equal(reply.body.code, 'idempotency_request_in_progress');
        }
        const listed = await server.call('GET', `/v1/messages?to=${encodeURIComponent(to)}`, { key: sender.key });
        assert.equal(listed.body.length, 1);
      });

      it('a request that failed validation stores nothing: the key can be used again', async () => {
        const headers = { 'idempotency-key': `retry-after-fix-${Date.now()}` };
        const bad = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: { ...sendBody(sender), variables: { '1': 'only one' } },
          headers,
        });
        assert.equal(bad.status, 422);
        const good = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender), headers });
        assert.equal(good.status, 202);
      });

      it('400 for a malformed Idempotency-Key', async () => {
        const reply = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: sendBody(sender),
          headers: { 'idempotency-key': 'x'.repeat(256) },
        });
        assert.equal(reply.status, 400);
        assert.equal(reply.body.code, 'validation_failed');
      });
    });

    describe('reading', () => {
      it('GET /v1/messages/{id}: 404 for unknown ids and other projects’ messages', async () => {
        const sent = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
        const stranger = await server.createProject();
        for (const [key, id] of [
          [stranger.key, sent.body.id],
          [sender.key, 'msg_00000000000000000000000000'],
          [sender.key, '../../etc/passwd'],
        ]) {
          const reply = await server.call('GET', `/v1/messages/${encodeURIComponent(id!)}`, { key });
          assert.equal(reply.status, 404, id);
          assert.equal(reply.body.code, 'not_found');
          const events = await server.call('GET', `/v1/messages/${encodeURIComponent(id!)}/events`, { key });
          assert.equal(events.status, 404);
        }
        const list = await server.call('GET', '/v1/messages', { key: stranger.key });
        assert.deepEqual(list.body, []);
      });

      it('pages newest first with Link rel="next": no overlap, no gap, stable under inserts', async () => {
        const pager = await createSender(server, 'order_update', 'en_US');
        const created: string[] = [];
        for (let i = 0; i < 7; i++) {
          const reply = await server.call('POST', '/v1/messages', { key: pager.key, body: sendBody(pager) });
          created.push(reply.body.id);
        }
        const seen: string[] = [];
        let path: string | undefined = '/v1/messages?limit=3';
        let pages = 0;
        while (path) {
          const page = await server.call('GET', path, { key: pager.key });
          assert.equal(page.status, 200);
          seen.push(...page.body.map((message: any) => message.id));
          pages++;
          if (pages === 1) {
            // Inserts between pages land before the cursor and never shift later pages.
            await server.call('POST', '/v1/messages', { key: pager.key, body: sendBody(pager) });
          }
          path = nextPageOf(page);
        }
        assert.equal(pages, 3);
        assert.deepEqual(seen, [...created].reverse());
      });

      it('filters by status, to, template, since and until', async () => {
        const filterer = await createSender(server, 'order_update', 'en_US');
        await approvedTemplate(server, filterer.key, 'other_one', 'en_US');
        const a = await server.call('POST', '/v1/messages', { key: filterer.key, body: sendBody(filterer, '+5511911110001') });
        await waitForStatus(server, filterer.key, a.body.id, 'READ');
        const middle = new Date().toISOString();
        await new Promise((resolve) => setTimeout(resolve, 5));
        const b = await server.call('POST', '/v1/messages', {
          key: filterer.key,
          body: { ...sendBody(filterer, '+15550000003'), template: 'other_one' }, // never READ
        });
        await server.call('POST', '/v1/messages', { key: filterer.key, body: sendBody(filterer, '+15550000003') });

        const ids = async (query: string) =>
          (await server.call('GET', `/v1/messages?${query}`, { key: filterer.key })).body.map((m: any) => m.id);
        assert.deepEqual(await ids('to=%2B5511911110001'), [a.body.id]);
        assert.deepEqual(await ids('to=+5511911110001'), [a.body.id], 'an unencoded + means +');
        assert.deepEqual(await ids('template=other_one'), [b.body.id]);
        assert.ok((await ids('status=READ')).includes(a.body.id));
        assert.ok(!(await ids('status=READ')).includes(b.body.id));
        assert.deepEqual(await ids(`until=${encodeURIComponent(middle)}`), [a.body.id]);
        assert.ok(!(await ids(`since=${encodeURIComponent(middle)}`)).includes(a.body.id));
        assert.ok((await ids(`since=${encodeURIComponent(middle)}`)).includes(b.body.id));
      });

      it('400 for bad list parameters', async () => {
        for (const query of ['limit=0', 'limit=201', 'limit=x', 'status=LOST', 'since=yesterday', 'cursor=%%%', 'cursor=bm9wZQ', 'colour=red']) {
          const reply = await server.call('GET', `/v1/messages?${query}`, { key: sender.key });
          assert.equal(reply.status, 400, query);
          assert.equal(reply.body.code, 'validation_failed');
        }
      });
    });

    describe('security', () => {
      it('401 on every message route for missing, forged and revoked keys', async () => {
        const { key } = await server.createProject();
        const spare = (await server.call('POST', '/v1/api-keys', { key, body: { name: 'spare' } })).body;
        await server.call('DELETE', `/v1/api-keys/${spare.id}`, { key });
        for (const credential of [undefined, 'svc_live_' + 'Q'.repeat(43), spare.key]) {
          for (const [method, path] of [
            ['POST', '/v1/messages'],
            ['GET', '/v1/messages'],
            ['GET', '/v1/messages/msg_00000000000000000000000000'],
            ['GET', '/v1/messages/msg_00000000000000000000000000/events'],
          ] as const) {
            const reply = await server.call(method, path, { key: credential, body: method === 'POST' ? sendBody(sender) : undefined });
            assert.equal(reply.status, 401, `${method} ${path}`);
          }
        }
      });

      it('cannot send with another project’s template', async () => {
        const { key } = await server.createProject();
        await server.call('PUT', '/v1/projects/me/provider-credentials', {
          key,
          body: { providerPhoneNumberId: '1065550002', providerAccessToken: 'tok' },
        });
        const reply = await server.call('POST', '/v1/messages', { key, body: sendBody(sender) });
        assert.equal(reply.status, 422);
        assert.equal(reply.body.code, 'template_not_found');
      });
    });
  });
}
