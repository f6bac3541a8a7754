import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { writeGate } from '../support/writeGate.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { nextPageOf } from '../support/http.ts';
import { inlineRefs } from '../support/openapi.ts';

const BODY = { type: 'BODY', text: 'Hello {{1}}, your order {{2}} has shipped.' };

function template(overrides: Record<string, unknown> = {}) {
  return { name: 'order_update', language: 'pt_BR', category: 'UTILITY', components: [BODY], ...overrides };
}

function fieldsOf(reply: { body: any }): [string, string][] {
  return reply.body.errors.map((error: any) => [error.field, error.code]);
}

for (const kind of databaseKinds()) {
  describe(`Templates (${kind})`, () => {
    let server: TestServer;
    before(async () => {
      // Reviews take an hour here, so every template stays PENDING unless a test settles it.
      server = await startTestServer(kind, { env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' } });
    });
    after(() => server.close());

    const register = (key: string, body: unknown) => server.call('POST', '/v1/templates', { key, body });

    describe('happy path', () => {
      it('registers a template as PENDING and returns it with components exactly as submitted', async () => {
        const { key } = await server.createProject();
        const components = [
          { type: 'HEADER', format: 'TEXT', text: 'Pedido {{1}}' },
          BODY,
          { type: 'FOOTER', text: 'Responda SAIR para sair' },
        ];
        const created = await register(key, template({ components }));
        assert.equal(created.status, 200, created.text);
        assert.match(created.body.id, /^tpl_[0-9a-z]{26}$/);
        assert.deepEqual(
          { ...created.body, id: undefined, createdAt: undefined, updatedAt: undefined },
          {
            id: undefined,
            name: 'order_update',
            language: 'pt_BR',
            category: 'UTILITY',
            status: 'PENDING',
            providerStatus: 'PENDING',
            parameterFormat: 'POSITIONAL',
            components,
            categoryHistory: [],
            createdAt: undefined,
            updatedAt: undefined,
          },
        );
        assert.match(created.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.equal(created.body.updatedAt, created.body.createdAt);
        assert.ok(!('rejectionReason' in created.body));

        const read = await server.call('GET', `/v1/templates/${created.body.id}`, { key });
        assert.equal(read.status, 200);
        assert.deepEqual(read.body, created.body);
        const list = await server.call('GET', '/v1/templates', { key });
        assert.deepEqual(list.body, [created.body]);
      });

      it('takes a HEADER without format as a TEXT header and echoes it without one', async () => {
        const { key } = await server.createProject();
        const components = [{ type: 'HEADER', text: 'Pedido {{1}}' }, BODY];
        const created = await register(key, template({ name: 'header_no_format', components }));
        assert.equal(created.status, 200, created.text);
        assert.deepEqual(created.body.components, components, 'no format is added');
        assert.deepEqual((await server.call('GET', `/v1/templates/${created.body.id}`, { key })).body.components, components);
        // A text header's rules still apply.
        const two = await register(key, template({ name: 'header_two', components: [{ type: 'HEADER', text: '{{1}} {{2}}' }, BODY] }));
        assert.equal(two.status, 400);
        assert.deepEqual(fieldsOf(two), [['/components/0/text', 'too_many_placeholders']]);
        // And its placeholder is filled by headerVariables when sending.
        const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', {
          key,
          body: { providerPhoneNumberId: '111', providerAccessToken: 'tok' },
        });
        assert.equal(saved.status, 200, saved.text);
        const approved = await server.call('POST', `/v1/test-helpers/templates/${created.body.id}/review`, {
          key,
          body: { status: 'APPROVED' },
        });
        assert.equal(approved.status, 200, approved.text);
        const sent = await server.call('POST', '/v1/messages', {
          key,
          body: {
            to: '+5511987654321',
            template: 'header_no_format',
            language: 'pt_BR',
            variables: { '1': 'Ana', '2': '#1001' },
            headerVariables: { '1': '#1001' },
          },
        });
        assert.equal(sent.status, 202, sent.text);
      });

      it('treats each language as its own template, and each project as its own namespace', async () => {
        const alice = await server.createProject('alice');
        const bob = await server.createProject('bob');
        assert.equal((await register(alice.key, template({ language: 'pt_BR' }))).status, 200);
        assert.equal((await register(alice.key, template({ language: 'en_US' }))).status, 200);
        assert.equal((await register(alice.key, template({ language: 'en' }))).status, 200);
        assert.equal((await register(bob.key, template({ language: 'pt_BR' }))).status, 200);
        const list = await server.call('GET', '/v1/templates', { key: alice.key });
        assert.deepEqual(
          list.body.map((item: any) => item.language),
          ['en', 'en_US', 'pt_BR'],
        );
      });

      it('lists newest first in pages that neither overlap nor skip, announced by Link', async () => {
        const { key } = await server.createProject();
        const ids: string[] = [];
        for (let i = 0; i < 7; i++) ids.push((await register(key, template({ name: `tpl_${i}` }))).body.id);
        const seen: string[] = [];
        let path: string | undefined = '/v1/templates?limit=3';
        const sizes: number[] = [];
        while (path) {
          const page = await server.call('GET', path, { key });
          assert.equal(page.status, 200, page.text);
          sizes.push(page.body.length);
          seen.push(...page.body.map((item: any) => item.id));
          for (const item of page.body) assert.ok(Array.isArray(item.components));
          path = nextPageOf(page);
          if (path) assert.match(path, /^\/v1\/templates\?.*limit=3/);
        }
        assert.deepEqual(sizes, [3, 3, 1]);
        assert.deepEqual(seen, [...ids].reverse());

        const all = await server.call('GET', '/v1/templates', { key });
        assert.equal(all.headers.get('link'), null, 'one page when all fit in the default size');
        const exact = await server.call('GET', '/v1/templates?limit=7', { key });
        assert.equal(exact.body.length, 7);
        assert.equal(exact.headers.get('link'), null);
      });

      it('deletes a template, returning it with deletedAt, after which its name is free again', async () => {
        const { key } = await server.createProject();
        const created = (await register(key, template())).body;
        const deleted = await server.call('DELETE', `/v1/templates/${created.id}`, { key });
        assert.equal(deleted.status, 200);
        assert.deepEqual(
          { ...deleted.body, deletedAt: undefined },
          { ...created, deletedAt: undefined, providerDeletion: 'deleted' },
        );
        assert.match(deleted.body.deletedAt, /Z$/);
        assert.equal((await server.call('GET', `/v1/templates/${created.id}`, { key })).status, 404);
        assert.deepEqual((await server.call('GET', '/v1/templates', { key })).body, []);
        assert.equal((await server.call('DELETE', `/v1/templates/${created.id}`, { key })).status, 404);
        const again = await register(key, template());
        assert.equal(again.status, 200);
        assert.notEqual(again.body.id, created.id);
      });

      it('shows rejectionReason on REJECTED templates only', async () => {
        const { key } = await server.createProject();
        const rejected = (await register(key, template({ name: 'rejected_one' }))).body;
        const approved = (await register(key, template({ name: 'approved_one' }))).body;
        await server.call('POST', `/v1/test-helpers/templates/${rejected.id}/review`, {
          key,
          body: { status: 'REJECTED', reason: 'Too promotional for UTILITY.' },
        });
        await server.call('POST', `/v1/test-helpers/templates/${approved.id}/review`, { key, body: { status: 'APPROVED' } });
        const list = (await server.call('GET', '/v1/templates', { key })).body;
        const byName = Object.fromEntries(list.map((item: any) => [item.name, item]));
        assert.equal(byName.rejected_one.status, 'REJECTED');
        assert.equal(byName.rejected_one.rejectionReason, 'Too promotional for UTILITY.');
        assert.equal(byName.approved_one.status, 'APPROVED');
        assert.ok(!('rejectionReason' in byName.approved_one));
      });
    });

    describe('errors', () => {
      it('refuses every rule break with 400 and a pointer to the field', async () => {
        const { key } = await server.createProject();
        const cases: [unknown, [string, string][]][] = [
          [template({ name: 'Order Update' }), [['/name', 'invalid_format']]],
          [template({ name: '' }), [['/name', 'too_short']]],
          [template({ name: 'x'.repeat(513) }), [['/name', 'too_long']]],
          [template({ language: 'pt-BR' }), [['/language', 'invalid_format']]],
          [template({ language: 'portuguese' }), [['/language', 'invalid_format']]],
          [template({ category: 'PROMO' }), [['/category', 'invalid_value']]],
          [template({ components: [] }), [['/components', 'missing_body']]],
          [template({ components: [BODY, BODY] }), [['/components/1/type', 'duplicate_component']]],
          [template({ components: [BODY, { type: 'CAROUSEL', text: 'x' }] }), [['/components/1/type', 'unknown_component_type']]],
          [template({ components: [BODY, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE' }] }] }), [['/components/1/buttons/0/type', 'not_allowed']]],
          [template({ components: [{ type: 'BODY' }] }), [['/components/0/text', 'required']]],
          [template({ components: [{ type: 'HEADER', format: 'text', text: 'x' }, BODY] }), [['/components/0/format', 'invalid_value']]],
          [template({ components: [{ type: 'HEADER', format: 'GIF', text: 'x' }, BODY] }), [['/components/0/format', 'invalid_value']]],
          [template({ components: [{ type: 'BODY', format: 'TEXT', text: 'x' }] }), [['/components/0/format', 'not_allowed']]],
          [template({ components: [{ type: 'BODY', text: 'x'.repeat(1025) }] }), [['/components/0/text', 'too_long']]],
          [template({ components: [{ type: 'BODY', text: ' ' }] }), [['/components/0/text', 'too_short']]],
          [template({ components: [BODY, { type: 'HEADER', format: 'TEXT', text: 'h'.repeat(61) }] }), [['/components/1/text', 'too_long']]],
          [template({ components: [BODY, { type: 'FOOTER', text: 'f'.repeat(61) }] }), [['/components/1/text', 'too_long']]],
          [
            template({ components: [BODY, { type: 'HEADER', format: 'TEXT', text: '{{1}} {{2}}' }] }),
            [['/components/1/text', 'too_many_placeholders']],
          ],
          [template({ components: [BODY, { type: 'FOOTER', text: 'by {{1}}' }] }), [['/components/1/text', 'placeholder_not_allowed']]],
          [template({ components: [{ type: 'BODY', text: 'a {{1}} b {{3}}' }] }), [['/components/0/text', 'placeholder_gap']]],
          [template({ components: [{ type: 'BODY', text: 'a {{ 1 }} b' }] }), [['/components/0/text', 'malformed_placeholder']]],
          [template({ components: [{ type: 'BODY', text: 'a {{0}} b' }] }), [['/components/0/text', 'malformed_placeholder']]],
          [template({ components: [{ type: 'BODY', text: 'a {{x}} b' }] }), [['/components/0/text', 'malformed_placeholder']]],
          [template({ components: [{ type: 'BODY', text: 'a {{1} b' }] }), [['/components/0/text', 'malformed_placeholder']]],
          [
            template({ name: 'Bad', category: 'x', components: [{ type: 'FOOTER', text: 'f' }] }),
            [
              ['/name', 'invalid_format'],
              ['/category', 'invalid_value'],
              ['/components', 'missing_body'],
            ],
          ],
        ];
        for (const [body, expected] of cases) {
          const reply = await register(key, body);
          assert.equal(reply.status, 400, JSON.stringify(body).slice(0, 200));
          assert.equal(reply.body.code, 'validation_failed');
          assert.match(reply.headers.get('content-type') ?? '', /^application\/problem\+json/);
          assert.deepEqual(fieldsOf(reply), expected, JSON.stringify(body).slice(0, 200));
          for (const error of reply.body.errors) assert.ok(error.message.length > 10, error.message);
        }
        assert.deepEqual((await server.call('GET', '/v1/templates', { key })).body, [], 'nothing was stored');
      });

      it('refuses missing, mistyped and unknown fields with pointers', async () => {
        const { key } = await server.createProject();
        const missing = await register(key, {});
        assert.equal(missing.status, 400);
        assert.deepEqual(fieldsOf(missing).map(([field]) => field).sort(), ['/category', '/components', '/language', '/name']);
        const unknown = await register(key, template({ status: 'APPROVED' }));
        assert.deepEqual(fieldsOf(unknown), [['/status', 'unknown_field']]);
        const unknownInComponent = await register(key, template({ components: [{ ...BODY, url: 'https://x' }] }));
        assert.deepEqual(fieldsOf(unknownInComponent), [['/components/0/url', 'unknown_field']]);
        const mistypedExample = await register(key, template({ components: [{ ...BODY, example: ['x'] }] }));
        assert.deepEqual(fieldsOf(mistypedExample), [['/components/0/example', 'type']]);
        const mistyped = await register(key, template({ name: 42, components: [{ type: 'BODY', text: { nested: { deep: 1 } } }] }));
        assert.deepEqual(
          fieldsOf(mistyped).map(([field]) => field),
          ['/name', '/components/0/text'],
        );
        const notArray = await register(key, template({ components: { type: 'BODY', text: 'x' } }));
        assert.deepEqual(fieldsOf(notArray), [['/components', 'type']]);
        const tooMany = await register(key, template({ components: Array.from({ length: 11 }, () => BODY) }));
        assert.deepEqual(fieldsOf(tooMany), [['/components', 'maxItems']]);
      });

      it('answers 409 template_exists for a taken (name, language)', async () => {
        const { key } = await server.createProject();
        assert.equal((await register(key, template())).status, 200);
        const taken = await register(key, template({ components: [{ type: 'BODY', text: 'Another text entirely' }] }));
        assert.equal(taken.status, 409);
        assert.equal(taken.body.code, 'template_exists');
        assert.match(taken.body.detail, /order_update.*pt_BR/);
        assert.equal((await server.call('GET', '/v1/templates', { key })).body.length, 1);
      });

      it('lets the unique constraint decide a race between two registrations', async () => {
        const gate = writeGate('/v1/templates');
        const paused = await startTestServer(kind, {
          database: server.database,
          env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' },
          testHooks: gate.hooks,
        });
        try {
          const { key } = await paused.createProject();
          // The first request passes the pre-check, then waits; the second registers meanwhile.
          gate.arm();
          const first = paused.call('POST', '/v1/templates', { key, body: template() });
          await gate.atWrite;
          const second = await paused.call('POST', '/v1/templates', { key, body: template() });
          assert.equal(second.status, 200);
          gate.release();
          const late = await first;
          assert.equal(late.status, 409, late.text);
          assert.equal(late.body.code, 'template_exists');
          const list = await paused.call('GET', '/v1/templates', { key });
          assert.deepEqual(
            list.body.map((item: any) => item.id),
            [second.body.id],
          );
        } finally {
          gate.release();
          await paused.app.stop();
        }
      });

      it('answers 404 for unknown and malformed ids', async () => {
        const { key } = await server.createProject();
        for (const id of ['tpl_00000000000000000000000000', 'nope', 'x'.repeat(200), '%27%20or%201%3D1', '..%2F..%2Fetc']) {
          for (const method of ['GET', 'DELETE']) {
            const reply = await server.call(method, `/v1/templates/${id}`, { key });
            assert.equal(reply.status, 404, `${method} ${id}`);
            assert.equal(reply.body.code, 'not_found');
          }
        }
      });

      it('refuses bad paging parameters', async () => {
        const { key } = await server.createProject();
        for (const query of ['limit=0', 'limit=201', 'limit=abc', 'cursor=garbage', 'cursor=', 'sort=name']) {
          const reply = await server.call('GET', `/v1/templates?${query}`, { key });
          assert.equal(reply.status, 400, query);
          assert.equal(reply.body.code, 'validation_failed');
          assert.match(reply.body.errors[0].field, /^query:\//);
        }
      });

      it('answers a wrong method with 405 and Allow', async () => {
        const { key } = await server.createProject();
        const reply = await server.call('PUT', '/v1/templates/tpl_x', { key, body: template() });
        assert.equal(reply.status, 405);
        assert.deepEqual(reply.headers.get('allow')?.split(', ').sort(), ['DELETE', 'GET']);
      });
    });

    describe('security', () => {
      it("never shows, deletes or reviews another project's templates", async () => {
        const alice = await server.createProject('alice');
        const bob = await server.createProject('bob');
        const bobs = (await register(bob.key, template())).body;
        const asAlice = (method: string, path: string, body?: unknown) => server.call(method, path, { key: alice.key, body });
        for (const reply of [
          await asAlice('GET', `/v1/templates/${bobs.id}`),
          await asAlice('DELETE', `/v1/templates/${bobs.id}`),
          await asAlice('POST', `/v1/test-helpers/templates/${bobs.id}/review`, { status: 'REJECTED' }),
        ]) {
          assert.equal(reply.status, 404);
          assert.equal(reply.body.code, 'not_found');
          assert.ok(!reply.text.includes('order_update'));
        }
        assert.deepEqual((await asAlice('GET', '/v1/templates')).body, []);
        const still = await server.call('GET', `/v1/templates/${bobs.id}`, { key: bob.key });
        assert.equal(still.status, 200);
        assert.equal(still.body.status, 'PENDING');
        // Alice may use the same name: names are per project.
        assert.equal((await register(alice.key, template())).status, 200);
      });

      it('is 401 on every route for missing, forged and revoked keys', async () => {
        const { key } = await server.createProject();
        const created = (await register(key, template())).body;
        const spare = (await server.call('POST', '/v1/api-keys', { key, body: { name: 'spare' } })).body;
        await server.call('DELETE', `/v1/api-keys/${spare.id}`, { key });
        const routes: [string, string, unknown?][] = [
          ['POST', '/v1/templates', template({ name: 'other' })],
          ['GET', '/v1/templates'],
          ['GET', `/v1/templates/${created.id}`],
          ['DELETE', `/v1/templates/${created.id}`],
          ['POST', `/v1/test-helpers/templates/${created.id}/review`, { status: 'APPROVED' }],
        ];
        for (const [method, path, body] of routes) {
          for (const credential of [undefined, 'svc_live_' + 'z'.repeat(40), spare.key, 'Basic abc']) {
            const reply = await server.call(method, path, { key: credential, body });
            assert.equal(reply.status, 401, `${method} ${path} with ${credential}`);
            assert.equal(reply.body.code, 'unauthorized');
            assert.match(reply.headers.get('www-authenticate') ?? '', /^Bearer/);
          }
        }
        const list = await server.call('GET', '/v1/templates', { key });
        assert.deepEqual(
          list.body.map((item: any) => [item.id, item.status]),
          [[created.id, 'PENDING']],
        );
      });

      it('refuses a registration that commits after its key was revoked mid-flight', async () => {
        const gate = writeGate('/v1/templates');
        const paused = await startTestServer(kind, {
          database: server.database,
          testHooks: gate.hooks,
        });
        try {
          const { key, keyId } = await paused.createProject();
          const admin = (await paused.call('POST', '/v1/api-keys', { key, body: { name: 'admin' } })).body;
          gate.arm();
          const inFlight = paused.call('POST', '/v1/templates', { key, body: template() });
          await gate.atWrite;
          assert.equal((await paused.call('DELETE', `/v1/api-keys/${keyId}`, { key: admin.key })).status, 200);
          gate.release();
          assert.equal((await inFlight).status, 401);
          assert.deepEqual((await paused.call('GET', '/v1/templates', { key: admin.key })).body, []);
        } finally {
          gate.release();
          await paused.app.stop();
        }
      });

      it('stores odd Unicode exactly and refuses text it cannot store faithfully', async () => {
        const { key } = await server.createProject();
        const odd = 'Olá {{1}} ‮gnp.exe‬ 👩🏽‍💻 ZWJ\u200d e\u0301 中文 \'; drop table templates; -- {{2}} fim';
        const created = await register(key, template({ components: [{ type: 'BODY', text: odd }] }));
        assert.equal(created.status, 200, created.text);
        const read = await server.call('GET', `/v1/templates/${created.body.id}`, { key });
        assert.equal(read.body.components[0].text, odd);

        const raw = (text: string) =>
          server.call('POST', '/v1/templates', {
            key,
            raw: `{"name":"raw_${Math.random().toString(36).slice(2, 8)}","language":"en","category":"UTILITY","components":[{"type":"BODY","text":"${text}"}]}`,
            headers: { 'content-type': 'application/json' },
          });
        const surrogate = await raw('broken \\ud800 text');
        assert.deepEqual(fieldsOf(surrogate), [['/components/0/text', 'invalid_unicode']]);
        const nul = await raw('nul \\u0000 byte');
        assert.deepEqual(fieldsOf(nul), [['/components/0/text', 'invalid_character']]);
        const names = await register(key, template({ name: "x'; drop table templates; --" }));
        assert.deepEqual(fieldsOf(names), [['/name', 'invalid_format']]);
        assert.ok(names.body.errors[0].message.length < 300);
      });

      it('survives hostile bodies: huge, deeply nested, prototype-poisoning', async () => {
        const { key } = await server.createProject();
        const huge = await register(key, template({ components: [{ type: 'BODY', text: 'x'.repeat(60_000) }] }));
        assert.deepEqual(fieldsOf(huge), [['/components/0/text', 'too_long']]);
        assert.ok(huge.text.length < 2000, 'the error does not echo the text');
        const tooBig = await register(key, template({ components: [{ type: 'BODY', text: 'x'.repeat(70_000) }] }));
        assert.equal(tooBig.status, 413);
        let nested: unknown = 'x';
        for (let i = 0; i < 2000; i++) nested = [nested];
        const deep = await register(key, template({ components: nested }));
        assert.equal(deep.status, 400);
        const proto = await server.call('POST', '/v1/templates', {
          key,
          raw: '{"name":"p","language":"en","category":"UTILITY","components":[{"type":"BODY","text":"x","__proto__":{"admin":true}}]}',
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(proto.status, 400);
        const manyErrors = await register(key, template({ components: Array.from({ length: 10 }, () => ({ type: 'X', text: '' })) }));
        assert.equal(manyErrors.status, 400);
        assert.equal(manyErrors.body.errors.length, 11);
        assert.deepEqual((await server.call('GET', '/v1/templates', { key })).body, []);
      });
    });

    it('documents every template route in OpenAPI with its error responses', async () => {
      const doc = inlineRefs((await server.call('GET', '/openapi.json')).body);
      const post = doc.paths['/v1/templates'].post;
      assert.ok(post.requestBody);
      assert.ok(post.responses['200'] && post.responses['400'] && post.responses['401'] && post.responses['409']);
      assert.match(post.responses['409'].description, /template_exists/);
      assert.ok(doc.paths['/v1/templates'].get.parameters.some((parameter: any) => parameter.name === 'cursor'));
      assert.ok(doc.paths['/v1/templates/{id}'].get.responses['404']);
      assert.ok(doc.paths['/v1/templates/{id}'].delete.responses['404']);
      const review = doc.paths['/v1/test-helpers/templates/{id}/review'].post;
      assert.match(review.responses['409'].description, /template_not_pending/);
      assert.match(post.responses['422'].description, /provider_setup_incomplete/);
      const component = post.requestBody.content['application/json'].schema.properties.components.items;
      for (const field of ['example', 'add_security_recommendation', 'code_expiration_minutes', 'buttons']) assert.ok(component.properties[field], field);
      const view = post.responses['200'].content['application/json'].schema;
      for (const field of ['providerStatus', 'providerStatusReason', 'categoryHistory', 'upcomingCategory']) assert.ok(view.properties[field], field);
      const deletion = doc.paths['/v1/templates/{id}'].delete;
      assert.ok(deletion.responses['200'].content['application/json'].schema.properties.providerDeletion);
      assert.match(deletion.responses['503'].description, /unavailable/);
    });

    describe('as the provider has them (sandbox)', () => {
      it('registers an AUTHENTICATION template in Meta’s model, reviews it by the same rules, and sends the code', async () => {
        const { key } = await server.createProject();
        await server.call('PUT', '/v1/projects/me/provider-credentials', { key, body: { providerPhoneNumberId: '1', providerAccessToken: 't' } });
        const components = [
          { type: 'BODY', add_security_recommendation: false },
          { type: 'FOOTER', code_expiration_minutes: 5 },
          { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy' }] },
        ];
        const created = await register(key, template({ name: 'login_code', language: 'en_US', category: 'AUTHENTICATION', components }));
        assert.equal(created.status, 200, created.text);
        assert.deepEqual(created.body.components, [
          { type: 'BODY', add_security_recommendation: false, text: '*{{1}}* is your verification code.' },
          { type: 'FOOTER', code_expiration_minutes: 5, text: 'This code expires in 5 minutes.' },
          components[2],
        ]);
        const invalid = await register(key, template({ name: 'login_bad', category: 'AUTHENTICATION', components: [{ type: 'BODY', text: 'Code {{1}}' }] }));
        assert.deepEqual(fieldsOf(invalid), [['/components', 'missing_buttons']]);

        await server.call('POST', `/v1/test-helpers/templates/${created.body.id}/review`, { key, body: { status: 'APPROVED' } });
        const sent = await server.call('POST', '/v1/messages', {
          key,
          body: { to: '+5511987654321', template: 'login_code', language: 'en_US', variables: { '1': '482913' } },
        });
        assert.equal(sent.status, 202, sent.text);
        assert.deepEqual(sent.body.content, { body: '*482913* is your verification code.', footer: 'This code expires in 5 minutes.' });
      });

      it('shows the provider’s own status, and a PAUSED template cannot send until it is active again', async () => {
        const { key } = await server.createProject();
        await server.call('PUT', '/v1/projects/me/provider-credentials', { key, body: { providerPhoneNumberId: '1', providerAccessToken: 't' } });
        const created = (await register(key, template({ name: 'paused_one', language: 'en_US', components: [{ type: 'BODY', text: 'Hi {{1}} there' }] }))).body;
        await server.call('POST', `/v1/test-helpers/templates/${created.id}/review`, { key, body: { status: 'APPROVED' } });
        assert.equal((await server.call('GET', `/v1/templates/${created.id}`, { key })).body.providerStatus, 'APPROVED');
        const at = Date.now();
        await server.app.inbound({ kind: 'template', templateId: created.id, status: 'APPROVED', providerStatus: 'PAUSED', reason: 'Low quality.', occurredAt: at });
        const paused = (await server.call('GET', `/v1/templates/${created.id}`, { key })).body;
        assert.deepEqual([paused.status, paused.providerStatus, paused.providerStatusReason], ['APPROVED', 'PAUSED', 'Low quality.']);
        const body = { to: '+5511987654321', template: 'paused_one', language: 'en_US', variables: { '1': 'Ana' } };
        const refused = await server.call('POST', '/v1/messages', { key, body });
        assert.equal(refused.status, 422);
        assert.equal(refused.body.code, 'template_not_approved');
        assert.match(refused.body.detail, /PAUSED at the provider \(Low quality\.\)/);
        await server.app.inbound({ kind: 'template', templateId: created.id, status: 'APPROVED', providerStatus: 'APPROVED', occurredAt: at + 1 });
        assert.equal((await server.call('POST', '/v1/messages', { key, body })).status, 202);
      });

      it('deletes at the provider too', async () => {
        const { key } = await server.createProject();
        const created = (await register(key, template({ name: 'deleted_both' }))).body;
        const deleted = await server.call('DELETE', `/v1/templates/${created.id}`, { key });
        assert.equal(deleted.body.providerDeletion, 'deleted');
        assert.ok(!('providerError' in deleted.body));
      });
    });

    describe('submission to the provider', () => {
      it('stores the template before submitting it, then records the provider id and review time', async () => {
        const { projectId, key } = await server.createProject();
        const provider = server.app.provider;
        const original = provider.submitTemplate;
        const seen: { templateId: string; storedFirst: boolean }[] = [];
        provider.submitTemplate = async (submission) => {
          const stored = await server.app.database.db
            .selectFrom('templates')
            .select('id')
            .where('id', '=', submission.templateId)
            .executeTakeFirst();
          seen.push({ templateId: submission.templateId, storedFirst: stored !== undefined });
          return { providerTemplateId: 'provider-tpl-1', checkAfterMs: 3_600_000 };
        };
        try {
          const before = Date.now();
          const created = await register(key, template({ name: 'submitted_after' }));
          assert.equal(created.status, 200, created.text);
          assert.deepEqual(seen, [{ templateId: created.body.id, storedFirst: true }]);
          const row = await server.app.database.db
            .selectFrom('templates')
            .selectAll()
            .where('id', '=', created.body.id)
            .executeTakeFirstOrThrow();
          assert.equal(row.project_id, projectId);
          assert.equal(row.provider_template_id, 'provider-tpl-1');
          assert.ok(row.review_due_at! >= before + 3_600_000, 'due when the provider said');
        } finally {
          provider.submitTemplate = original;
        }
      });

      it('keeps a template PENDING and has the review worker check it at once when the submission fails', async () => {
        const failing = await startTestServer(kind, { database: server.database, env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' } });
        const provider = failing.app.provider;
        const original = provider.submitTemplate;
        provider.submitTemplate = async () => {
          throw new Error('provider unreachable');
        };
        try {
          const { key } = await failing.createProject();
          const created = await failing.call('POST', '/v1/templates', { key, body: template({ name: 'submit_failed' }) });
          assert.equal(created.status, 200, created.text);
          assert.equal(created.body.status, 'PENDING');
          // The review worker checks it now, not an hour from now (the sandbox's review delay).
          const deadline = Date.now() + 15_000;
          let read: any;
          do {
            await new Promise((resolve) => setTimeout(resolve, 25));
            read = (await failing.call('GET', `/v1/templates/${created.body.id}`, { key })).body;
          } while (read.status === 'PENDING' && Date.now() < deadline);
          assert.equal(read.status, 'APPROVED', JSON.stringify(read));
          const row = await failing.app.database.db
            .selectFrom('templates')
            .select(['provider_template_id', 'review_due_at'])
            .where('id', '=', created.body.id)
            .executeTakeFirstOrThrow();
          assert.deepEqual({ ...row }, { provider_template_id: null, review_due_at: null });
        } finally {
          provider.submitTemplate = original;
          await failing.app.stop();
        }
      });

      it('never submits a template that lost the race or whose key was revoked', async () => {
        const gate = writeGate('/v1/templates');
        const paused = await startTestServer(kind, {
          database: server.database,
          env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' },
          testHooks: gate.hooks,
        });
        const provider = paused.app.provider;
        const original = provider.submitTemplate;
        const submitted: string[] = [];
        provider.submitTemplate = async (submission) => {
          submitted.push(submission.name);
          return original.call(provider, submission);
        };
        try {
          const { key, keyId } = await paused.createProject();
          gate.arm();
          const first = paused.call('POST', '/v1/templates', { key, body: template({ name: 'raced' }) });
          await gate.atWrite;
          const second = await paused.call('POST', '/v1/templates', { key, body: template({ name: 'raced' }) });
          assert.equal(second.status, 200, second.text);
          gate.release();
          assert.equal((await first).status, 409);
          assert.deepEqual(submitted, ['raced'], 'only the winner was submitted');

          const revoked = writeGate('/v1/templates');
          const admin = (await paused.call('POST', '/v1/api-keys', { key, body: { name: 'admin' } })).body;
          const later = await startTestServer(kind, {
            database: server.database,
            env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' },
            testHooks: revoked.hooks,
          });
          const laterProvider = later.app.provider;
          const laterOriginal = laterProvider.submitTemplate;
          laterProvider.submitTemplate = async (submission) => {
            submitted.push(submission.name);
            return laterOriginal.call(laterProvider, submission);
          };
          try {
            revoked.arm();
            const inFlight = later.call('POST', '/v1/templates', { key, body: template({ name: 'revoked_midway' }) });
            await revoked.atWrite;
            assert.equal((await later.call('DELETE', `/v1/api-keys/${keyId}`, { key: admin.key })).status, 200);
            revoked.release();
            assert.equal((await inFlight).status, 401);
            assert.deepEqual(submitted, ['raced'], 'the revoked registration was not submitted');
          } finally {
            revoked.release();
            laterProvider.submitTemplate = laterOriginal;
            await later.app.stop();
          }
        } finally {
          gate.release();
          provider.submitTemplate = original;
          await paused.app.stop();
        }
      });
    });
  });
}
