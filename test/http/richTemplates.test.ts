import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { startSampleServer, type SampleServer } from '../support/sampleServer.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// CONTRACT §9, registering and sending, with the sandbox: every component type registered (and
// each rule it can break), media samples fetched under the limits, and each send field's rules.

const BODY = { type: 'BODY', text: 'Hello {{1}}, your order {{2}} has shipped.' };
const IMAGE_HEADER = { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['4::aW1hZ2UvanBlZw==:ARb'] } };
const QUICK_REPLIES = [
  { type: 'QUICK_REPLY', text: 'Yes, confirm' },
  { type: 'QUICK_REPLY', text: 'Reschedule' },
];
const TRACK = { type: 'URL', text: 'Track order', url: 'https://shop.example.com/track/{{1}}', example: ['A-1001'] };
const CALL = { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+15550051310' };
const COUPON = { type: 'COPY_CODE', example: 'SAVE20' };

function template(overrides: Record<string, unknown> = {}) {
  return { name: 'order_update', language: 'en_US', category: 'MARKETING', components: [BODY], ...overrides };
}

function fieldsOf(reply: { body: any }): [string, string][] {
  return reply.body.errors.map((error: any) => [error.field, error.code]);
}

for (const kind of databaseKinds()) {
  describe(`Rich templates (${kind})`, () => {
    let server: TestServer;
    let samples: SampleServer;
    let key: string;
    let names = 0;
    before(async () => {
      // Reviews take an hour: templates stay PENDING until a test approves them.
      server = await startTestServer(kind, { env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' } });
      samples = await startSampleServer();
      ({ key } = await server.createProject());
      const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', {
        key,
        body: { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-test-token' },
      });
      assert.equal(saved.status, 200, saved.text);
    });
    after(async () => {
      await server.close();
      await samples.close();
    });

    const register = (body: Record<string, unknown>) => server.call('POST', '/v1/templates', { key, body: { ...body, name: `${body.name}_${++names}` } });

    async function approved(body: Record<string, unknown>): Promise<{ id: string; name: string }> {
      const created = await register(body);
      assert.equal(created.status, 200, created.text);
      const reviewed = await server.call('POST', `/v1/test-helpers/templates/${created.body.id}/review`, { key, body: { status: 'APPROVED' } });
      assert.equal(reviewed.status, 200, reviewed.text);
      return { id: created.body.id, name: created.body.name };
    }

    describe('registering', () => {
      it('takes every component type in any category and returns the components as stored, with parameterFormat', async () => {
        const cases: unknown[][] = [
          [IMAGE_HEADER, BODY, { type: 'FOOTER', text: 'Acme' }, { type: 'BUTTONS', buttons: [...QUICK_REPLIES, TRACK] }],
          [{ type: 'HEADER', format: 'VIDEO', example: { header_handle: ['4::dmlkZW8='] } }, BODY],
          [{ type: 'HEADER', format: 'DOCUMENT', example: { header_handle: ['4::cGRm'] } }, BODY, { type: 'BUTTONS', buttons: [CALL] }],
          [{ type: 'HEADER', format: 'LOCATION' }, BODY, { type: 'BUTTONS', buttons: [COUPON, TRACK, { ...TRACK, url: 'https://shop.example.com/help' , example: undefined }] }],
          [BODY, { type: 'BUTTONS', buttons: [CALL, COUPON, ...QUICK_REPLIES] }],
        ];
        for (const category of ['MARKETING', 'UTILITY']) {
          for (const components of cases) {
            const clean = JSON.parse(JSON.stringify(components));
            const created = await register(template({ category, components: clean }));
            assert.equal(created.status, 200, created.text);
            assert.deepEqual(created.body.components, clean);
            assert.equal(created.body.parameterFormat, 'POSITIONAL');
            const read = await server.call('GET', `/v1/templates/${created.body.id}`, { key });
            assert.deepEqual(read.body, created.body);
          }
        }
      });

      it('takes ten buttons with quick replies grouped, before or after the others', async () => {
        const quick = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'QUICK_REPLY', text: `Option ${i + 1}` }));
        for (const buttons of [[...quick(7), TRACK, CALL, COUPON], [TRACK, { ...TRACK, text: 'Invoice' }, ...quick(8)]]) {
          const created = await register(template({ components: [BODY, { type: 'BUTTONS', buttons }] }));
          assert.equal(created.status, 200, created.text);
        }
      });

      it('takes named parameters with Meta’s examples, or without (neutral ones are derived)', async () => {
        const components = [
          { type: 'HEADER', format: 'TEXT', text: 'Order {{order_id}}', example: { header_text_named_params: [{ param_name: 'order_id', example: 'A-1001' }] } },
          {
            type: 'BODY',
            text: 'Hi {{first_name}}, your order {{order_id}} ships on {{ship_date}}. Thanks {{first_name}}!',
            example: {
              body_text_named_params: [
                { param_name: 'first_name', example: 'Ana' },
                { param_name: 'order_id', example: 'A-1001' },
                { param_name: 'ship_date', example: 'May 3' },
              ],
            },
          },
        ];
        const created = await register(template({ parameter_format: 'NAMED', components }));
        assert.equal(created.status, 200, created.text);
        assert.equal(created.body.parameterFormat, 'NAMED');
        assert.deepEqual(created.body.components, components);
        const bare = await register(template({ parameter_format: 'NAMED', components: [{ type: 'BODY', text: 'Hi {{first_name}}, welcome.' }] }));
        assert.equal(bare.status, 200, bare.text);
        const positional = await register(template({ parameter_format: 'POSITIONAL' }));
        assert.equal(positional.status, 200, positional.text);
        assert.equal(positional.body.parameterFormat, 'POSITIONAL');
      });

      it('refuses each breach of Meta’s rules with 400 validation_failed naming the component or button', async () => {
        const buttons = (...list: unknown[]) => template({ components: [BODY, { type: 'BUTTONS', buttons: list }] });
        const quick = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'QUICK_REPLY', text: `Option ${i + 1}` }));
        const cases: [unknown, [string, string][]][] = [
          // Headers
          [template({ components: [{ type: 'HEADER', format: 'IMAGE' }, BODY] }), [['/components/0/example', 'required']]],
          [template({ components: [{ type: 'HEADER', format: 'IMAGE', text: 'Hi', example: { header_handle: ['h'] } }, BODY] }), [['/components/0/text', 'not_allowed']]],
          [template({ components: [{ type: 'HEADER', format: 'VIDEO', example: { header_handle: ['h'], header_url: ['https://x.example/v.mp4'] } }, BODY] }), [['/components/0/example', 'not_allowed']]],
          [template({ components: [{ type: 'HEADER', format: 'DOCUMENT', example: { header_handle: ['a', 'b'] } }, BODY] }), [['/components/0/example/header_handle', 'example_mismatch']]],
          [template({ components: [{ type: 'HEADER', format: 'DOCUMENT', example: { header_url: ['ftp://x.example/a.pdf'] } }, BODY] }), [['/components/0/example/header_url/0', 'invalid_url']]],
          [template({ components: [{ type: 'HEADER', format: 'LOCATION', example: { header_handle: ['h'] } }, BODY] }), [['/components/0/example', 'not_allowed']]],
          [template({ components: [{ type: 'HEADER', format: 'image', example: { header_handle: ['h'] } }, BODY] }), [['/components/0/format', 'invalid_value']]],
          [template({ components: [{ ...BODY, example: { header_handle: ['h'] } }] }), [['/components/0/example/header_handle', 'not_allowed']]],
          // Buttons: counts, grouping, each type's fields
          [buttons(...quick(11)), [['/components/1/buttons', 'invalid_count']]],
          [buttons(TRACK, { ...TRACK, text: 'B' }, { ...TRACK, text: 'C' }), [['/components/1/buttons/2', 'too_many_buttons']]],
          [buttons(CALL, { ...CALL, text: 'Other' }), [['/components/1/buttons/1', 'too_many_buttons']]],
          [buttons(COUPON, COUPON), [['/components/1/buttons/1', 'too_many_buttons']]],
          [buttons(QUICK_REPLIES[0], TRACK, QUICK_REPLIES[1]), [['/components/1/buttons/1', 'buttons_not_grouped']]],
          [buttons({ type: 'QUICK_REPLY' }), [['/components/1/buttons/0/text', 'required']]],
          [buttons({ type: 'QUICK_REPLY', text: 'x'.repeat(26) }), [['/components/1/buttons/0/text', 'too_long']]],
          [buttons({ type: 'QUICK_REPLY', text: 'Yes', url: 'https://x.example' }), [['/components/1/buttons/0/url', 'not_allowed']]],
          [buttons({ type: 'URL', text: 'Go' }), [['/components/1/buttons/0/url', 'required']]],
          [buttons({ type: 'URL', text: 'Go', url: 'https://x.example/{{1}}' }), [['/components/1/buttons/0/example', 'required']]],
          [buttons({ type: 'URL', text: 'Go', url: 'https://x.example/{{1}}/more', example: ['a'] }), [['/components/1/buttons/0/url', 'malformed_placeholder']]],
          [buttons({ type: 'URL', text: 'Go', url: 'https://x.example/{{2}}', example: ['a'] }), [['/components/1/buttons/0/url', 'malformed_placeholder']]],
          [buttons({ type: 'URL', text: 'Go', url: 'https://x.example/{{1}}{{1}}', example: ['a'] }), [['/components/1/buttons/0/url', 'malformed_placeholder']]],
          [buttons({ type: 'URL', text: 'Go', url: 'javascript:alert(1)' }), [['/components/1/buttons/0/url', 'invalid_url']]],
          [buttons({ type: 'URL', text: 'Go', url: 'https://x.example/a', example: ['a'] }), [['/components/1/buttons/0/example', 'not_allowed']]],
          [buttons({ type: 'PHONE_NUMBER', text: 'Call' }), [['/components/1/buttons/0/phone_number', 'required']]],
          [buttons({ type: 'PHONE_NUMBER', text: 'Call', phone_number: '555-0100' }), [['/components/1/buttons/0/phone_number', 'invalid_phone']]],
          [buttons({ type: 'COPY_CODE' }), [['/components/1/buttons/0/example', 'required']]],
          [buttons({ type: 'COPY_CODE', example: 'X'.repeat(16) }), [['/components/1/buttons/0/example', 'too_long']]],
          [buttons({ type: 'COPY_CODE', example: 'SAVE', text: 'Copy' }), [['/components/1/buttons/0/text', 'not_allowed']]],
          [buttons({ type: 'CATALOG', text: 'See' }), [['/components/1/buttons/0/type', 'invalid_value']]],
          [buttons({ type: 'OTP', otp_type: 'COPY_CODE' }), [['/components/1/buttons/0/type', 'not_allowed']]],
          [template({ components: [BODY, { type: 'BUTTONS', text: 'x', buttons: [CALL] }] }), [['/components/1/text', 'not_allowed']]],
          // Named parameters
          [template({ parameter_format: 'named' }), [['/parameter_format', 'invalid_value']]],
          [template({ parameter_format: 'NAMED', components: [{ type: 'BODY', text: 'Hi {{1}}, welcome.' }] }), [['/components/0/text', 'malformed_placeholder']]],
          [template({ parameter_format: 'NAMED', components: [{ type: 'BODY', text: 'Hi {{First_Name}}, welcome.' }] }), [['/components/0/text', 'malformed_placeholder']]],
          [template({ components: [{ type: 'BODY', text: 'Hi {{first_name}}, welcome.' }] }), [['/components/0/text', 'malformed_placeholder']]],
          [
            template({ parameter_format: 'NAMED', components: [{ type: 'BODY', text: 'Hi {{first_name}}, welcome.', example: { body_text_named_params: [{ param_name: 'name', example: 'Ana' }] } }] }),
            [['/components/0/example/body_text_named_params', 'example_mismatch']],
          ],
          [
            template({ parameter_format: 'NAMED', components: [{ type: 'BODY', text: 'Hi {{first_name}}, welcome.', example: { body_text: [['Ana']] } }] }),
            [['/components/0/example/body_text', 'not_allowed'], ['/components/0/example/body_text_named_params', 'required']],
          ],
          [
            template({ components: [{ type: 'BODY', text: 'Hi {{1}}, welcome.', example: { body_text: [['Ana']], body_text_named_params: [{ param_name: 'x', example: 'y' }] } }] }),
            [['/components/0/example/body_text_named_params', 'not_allowed']],
          ],
          [
            template({ category: 'AUTHENTICATION', parameter_format: 'NAMED', components: [{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE' }] }] }),
            [['/parameter_format', 'not_allowed']],
          ],
        ];
        for (const [body, expected] of cases) {
          const reply = await register(body as Record<string, unknown>);
          assert.equal(reply.status, 400, `${JSON.stringify(body)} → ${reply.text}`);
          assert.equal(reply.body.code, 'validation_failed');
          assert.deepEqual(fieldsOf(reply), expected, JSON.stringify(body));
        }
        // Nothing of it was stored.
        const list = await server.call('GET', '/v1/templates?limit=200', { key });
        assert.ok(!list.body.some((found: any) => JSON.stringify(found.components).includes('CATALOG')));
      });

      it('downloads a header_url sample within the provider’s limits', async () => {
        for (const [format, path] of [['IMAGE', '/photo.png'], ['IMAGE', '/untyped.png'], ['DOCUMENT', '/invoice.pdf']]) {
          const components = [{ type: 'HEADER', format, example: { header_url: [`${samples.url}${path}`] } }, BODY];
          const created = await register(template({ components }));
          assert.equal(created.status, 200, created.text);
          assert.deepEqual(created.body.components, components, 'stored as given');
          assert.ok(samples.requested.includes(path!), `${path} was downloaded`);
        }
      });

      it('refuses a sample that cannot be fetched or breaks a limit, naming it', async () => {
        const cases: [string, string, string][] = [
          ['IMAGE', '/huge.jpg', 'sample_too_large'],
          ['IMAGE', '/chunked-huge.png', 'sample_too_large'],
          ['IMAGE', '/page.html', 'sample_unsupported_type'],
          ['VIDEO', '/photo.png', 'sample_unsupported_type'],
          ['DOCUMENT', '/missing.pdf', 'sample_http_status'],
          ['IMAGE', '/moved.png', 'sample_http_status'],
        ];
        for (const [format, path, code] of cases) {
          const reply = await register(template({ components: [BODY, { type: 'HEADER', format, example: { header_url: [`${samples.url}${path}`] } }] }));
          assert.equal(reply.status, 400, `${path} → ${reply.text}`);
          assert.equal(reply.body.code, 'validation_failed');
          assert.deepEqual(fieldsOf(reply), [['/components/1/example/header_url/0', code]], path);
          assert.match(reply.body.detail, new RegExp(`The ${format} sample`));
        }
        const unreachable = await register(template({ components: [{ type: 'HEADER', format: 'IMAGE', example: { header_url: ['http://127.0.0.1:1/x.png'] } }, BODY] }));
        assert.deepEqual(fieldsOf(unreachable), [['/components/0/example/header_url/0', 'sample_unreachable']]);
      });
    });

    describe('registering — sample downloads outside development mode', () => {
      let strict: TestServer;
      before(async () => {
        strict = await startTestServer(kind, { env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000', SVC_ALLOW_PRIVATE_CALLBACKS: 'false' } });
      });
      after(() => strict.close());

      it('refuses samples on private, loopback or link-local addresses, and over http (SSRF rules of §6)', async () => {
        const { key: strictKey } = await strict.createProject();
        for (const url of [
          `${samples.url.replace('http:', 'https:')}/photo.png`,
          'https://localhost/photo.png',
          'https://169.254.169.254/latest/meta-data/iam',
          'https://[::1]/photo.png',
          'https://10.0.0.7/photo.png',
          `${samples.url}/photo.png`,
        ]) {
          const reply = await strict.call('POST', '/v1/templates', {
            key: strictKey,
            body: template({ components: [{ type: 'HEADER', format: 'IMAGE', example: { header_url: [url] } }, BODY] }),
          });
          assert.equal(reply.status, 400, `${url} → ${reply.text}`);
          assert.deepEqual(fieldsOf(reply), [['/components/0/example/header_url/0', 'sample_refused']], url);
        }
        assert.equal(samples.requested.filter((path) => path === '/photo.png').length, 2, 'only the development-mode downloads reached the server');
      });
    });

    describe('sending', () => {
      const send = (body: Record<string, unknown>) => server.call('POST', '/v1/messages', { key, body: { to: '+5511987654321', language: 'en_US', ...body } });
      const vars = { '1': 'Ana', '2': 'A-1001' };

      it('sends a media header with buttons, and shows what the recipient sees', async () => {
        const { name } = await approved(
          template({ components: [IMAGE_HEADER, BODY, { type: 'FOOTER', text: 'Acme' }, { type: 'BUTTONS', buttons: [...QUICK_REPLIES, TRACK, CALL, COUPON] }] }),
        );
        const reply = await send({
          template: name,
          variables: vars,
          headerMedia: { link: 'https://cdn.example.com/p.jpg' },
          buttons: { '1': { payload: 'RESCHEDULE' }, '2': { text: 'A-1001' }, '4': { couponCode: 'SAVE20' } },
        });
        assert.equal(reply.status, 202, reply.text);
        const content = {
          header: { type: 'IMAGE', link: 'https://cdn.example.com/p.jpg' },
          body: 'Hello Ana, your order A-1001 has shipped.',
          footer: 'Acme',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Yes, confirm', payload: 'Yes, confirm' },
            { type: 'QUICK_REPLY', text: 'Reschedule', payload: 'RESCHEDULE' },
            { type: 'URL', text: 'Track order', url: 'https://shop.example.com/track/A-1001' },
            { type: 'PHONE_NUMBER', text: 'Call us', phoneNumber: '+15550051310' },
            { type: 'COPY_CODE', text: 'Copy offer code', couponCode: 'SAVE20' },
          ],
        };
        assert.deepEqual(reply.body.content, content);
        const read = await server.call('GET', `/v1/messages/${reply.body.id}`, { key });
        assert.deepEqual(read.body.content, content);
        const listed = await server.call('GET', `/v1/messages?template=${name}`, { key });
        assert.deepEqual(listed.body[0].content, content);
      });

      it('requires headerMedia exactly when the template has a media header, and filename only for a DOCUMENT', async () => {
        const image = await approved(template({ components: [IMAGE_HEADER, BODY] }));
        const document = await approved(template({ components: [{ type: 'HEADER', format: 'DOCUMENT', example: { header_handle: ['h'] } }, BODY] }));
        const plain = await approved(template());
        const cases: [Record<string, unknown>, RegExp][] = [
          [{ template: image.name, variables: vars }, /headerMedia is missing: the template has a IMAGE header/],
          [{ template: image.name, variables: vars, headerMedia: { link: 'https://cdn.example.com/a.jpg', filename: 'a.jpg' } }, /filename is for a DOCUMENT header/],
          [{ template: plain.name, variables: vars, headerMedia: { link: 'https://cdn.example.com/a.jpg' } }, /headerMedia is given, but the template has no IMAGE/],
          [{ template: image.name, variables: vars, headerMedia: { link: 'https://cdn.example.com/a.jpg' }, headerLocation: { latitude: 1, longitude: 2 } }, /headerLocation is given/],
        ];
        for (const [body, detail] of cases) {
          const reply = await send(body);
          assert.equal(reply.status, 422, reply.text);
          assert.equal(reply.body.code, 'template_variables_mismatch');
          assert.match(reply.body.detail, detail);
        }
        const ok = await send({ template: document.name, variables: vars, headerMedia: { link: 'https://cdn.example.com/i.pdf', filename: 'invoice.pdf' } });
        assert.equal(ok.status, 202, ok.text);
        assert.deepEqual(ok.body.content.header, { type: 'DOCUMENT', link: 'https://cdn.example.com/i.pdf', filename: 'invoice.pdf' });
        // link must be https: a shape rule (400).
        for (const link of ['http://cdn.example.com/a.jpg', 'ftp://x', '']) {
          const reply = await send({ template: image.name, variables: vars, headerMedia: { link } });
          assert.equal(reply.status, 400, reply.text);
          assert.equal(reply.body.errors[0].field, '/headerMedia/link');
        }
      });

      it('requires headerLocation for a LOCATION header', async () => {
        const location = await approved(template({ components: [{ type: 'HEADER', format: 'LOCATION' }, BODY] }));
        const missing = await send({ template: location.name, variables: vars });
        assert.equal(missing.status, 422);
        assert.match(missing.body.detail, /headerLocation is missing/);
        const place = { latitude: 37.483307, longitude: -122.148981, name: 'Acme HQ', address: '1 Hacker Way' };
        const ok = await send({ template: location.name, variables: vars, headerLocation: place });
        assert.equal(ok.status, 202, ok.text);
        assert.deepEqual(ok.body.content.header, { type: 'LOCATION', ...place });
        const out = await send({ template: location.name, variables: vars, headerLocation: { latitude: 91, longitude: 0 } });
        assert.equal(out.status, 400, out.text);
      });

      it('checks buttons by index: a URL {{1}} and a COPY_CODE need theirs, a QUICK_REPLY may, others take none', async () => {
        const { name } = await approved(template({ components: [BODY, { type: 'BUTTONS', buttons: [TRACK, CALL, COUPON, { ...TRACK, url: 'https://shop.example.com/help', example: undefined, text: 'Help' }, QUICK_REPLIES[0]] }] }));
        const complete = { '0': { text: 'A-1001' }, '2': { couponCode: 'SAVE20' } };
        const cases: [unknown, RegExp][] = [
          [undefined, /buttons is missing "0": \{ "text" \} for the URL button; buttons is missing "2": \{ "couponCode" \}/],
          [{ '2': { couponCode: 'SAVE20' } }, /missing "0"/],
          [{ ...complete, '1': { text: 'x' } }, /"1", a PHONE_NUMBER button, which takes no value/],
          [{ ...complete, '3': { text: 'x' } }, /"3", a URL button, which takes no value/],
          [{ ...complete, '7': { payload: 'x' } }, /"7", which names no button of the template/],
          [{ ...complete, '0': { payload: 'x' } }, /missing "0"/],
          [{ ...complete, '4': { text: 'x' } }, /buttons."4" \(QUICK_REPLY\) takes "payload", not "text"/],
        ];
        for (const [buttons, detail] of cases) {
          const reply = await send({ template: name, variables: vars, ...(buttons !== undefined && { buttons }) });
          assert.equal(reply.status, 422, `${JSON.stringify(buttons)} → ${reply.text}`);
          assert.equal(reply.body.code, 'template_variables_mismatch');
          assert.match(reply.body.detail, detail);
        }
        const ok = await send({ template: name, variables: vars, buttons: complete });
        assert.equal(ok.status, 202, ok.text);
        const shape = await send({ template: name, variables: vars, buttons: { ...complete, x: { text: 'a' } } });
        assert.equal(shape.status, 400, shape.text);
        const long = await send({ template: name, variables: vars, buttons: { ...complete, '2': { couponCode: 'X'.repeat(16) } } });
        assert.equal(long.status, 400, long.text);
      });

      it('fills a NAMED template by name, and refuses numbered or missing names', async () => {
        const { name, id } = await approved(
          template({
            parameter_format: 'NAMED',
            components: [{ type: 'HEADER', format: 'TEXT', text: 'Order {{order_id}}' }, { type: 'BODY', text: 'Hi {{first_name}}, order {{order_id}} shipped.' }],
          }),
        );
        const ok = await send({ template: name, variables: { first_name: 'Ana', order_id: 'A-1' }, headerVariables: { order_id: 'A-1' } });
        assert.equal(ok.status, 202, ok.text);
        assert.deepEqual(ok.body.content, { header: 'Order A-1', body: 'Hi Ana, order A-1 shipped.' });
        const numbered = await send({ template: name, variables: { '1': 'Ana', '2': 'A-1' }, headerVariables: { order_id: 'A-1' } });
        assert.equal(numbered.status, 422);
        assert.match(numbered.body.detail, /variables is missing "first_name", "order_id"; variables has "1", "2"/);
        const missing = await send({ template: name, variables: { first_name: 'Ana', order_id: 'A-1' } });
        assert.equal(missing.status, 422);
        assert.match(missing.body.detail, /headerVariables is missing "order_id"/);
        const preview = await server.call('POST', `/v1/templates/${id}/preview`, { key, body: { variables: { first_name: 'Bia', order_id: 'B-2' }, headerVariables: { order_id: 'B-2' } } });
        assert.equal(preview.status, 200, preview.text);
        assert.deepEqual(preview.body, { header: 'Order B-2', body: 'Hi Bia, order B-2 shipped.', footer: null });
      });

      it('a POSITIONAL template refuses named keys as it always did (400), and its sends are unchanged', async () => {
        const { name } = await approved(template());
        const named = await send({ template: name, variables: { one: 'x', '2': 'y' } });
        assert.equal(named.status, 400, named.text);
        assert.deepEqual(fieldsOf(named), [['/variables/one', 'unknown_field']]);
        assert.equal(named.body.detail, '/variables/one is not a known field.');
        const mismatch = await send({ template: name, variables: { '1': 'x' } });
        assert.equal(mismatch.status, 422);
        assert.equal(mismatch.body.detail, `Template '${name}' (en_US) needs variables "1", "2" and headerVariables none; got variables "1" and headerVariables none.`);
        const ok = await send({ template: name, variables: vars });
        assert.equal(ok.status, 202);
        assert.deepEqual(ok.body.content, { body: 'Hello Ana, your order A-1001 has shipped.' });
      });

      it('previews media, location and buttons with the send’s rules', async () => {
        const { id } = await approved(template({ components: [IMAGE_HEADER, BODY, { type: 'BUTTONS', buttons: [TRACK, QUICK_REPLIES[0]] }] }));
        const preview = await server.call('POST', `/v1/templates/${id}/preview`, {
          key,
          body: { variables: vars, headerMedia: { link: 'https://cdn.example.com/p.jpg' }, buttons: { '0': { text: 'Z-9' } } },
        });
        assert.equal(preview.status, 200, preview.text);
        assert.deepEqual(preview.body, {
          header: { type: 'IMAGE', link: 'https://cdn.example.com/p.jpg' },
          body: 'Hello Ana, your order A-1001 has shipped.',
          footer: null,
          buttons: [
            { type: 'URL', text: 'Track order', url: 'https://shop.example.com/track/Z-9' },
            { type: 'QUICK_REPLY', text: 'Yes, confirm', payload: 'Yes, confirm' },
          ],
        });
        const missing = await server.call('POST', `/v1/templates/${id}/preview`, { key, body: { variables: vars } });
        assert.equal(missing.status, 422);
        assert.equal(missing.body.code, 'template_variables_mismatch');
      });

      it('a batch carries media and buttons per item, each checked on its own; a scheduled send keeps them', async () => {
        const { name } = await approved(template({ components: [IMAGE_HEADER, BODY, { type: 'BUTTONS', buttons: [TRACK] }] }));
        const item = (n: number) => ({
          to: `+551198765432${n}`,
          variables: { '1': `Ana ${n}`, '2': `A-${n}` },
          headerMedia: { link: `https://cdn.example.com/${n}.jpg` },
          buttons: { '0': { text: `A-${n}` } },
        });
        const { buttons: _buttons, ...withoutButtons } = item(3);
        const reply = await server.call('POST', '/v1/messages/batch', {
          key,
          body: { template: name, language: 'en_US', items: [item(1), item(2), withoutButtons] },
        });
        assert.equal(reply.status, 202, reply.text);
        assert.equal(reply.body.acceptedCount, 2);
        assert.deepEqual(reply.body.items.map((result: any) => result.status), [202, 202, 422]);
        assert.equal(reply.body.items[2].error.code, 'template_variables_mismatch');
        assert.deepEqual(reply.body.items[1].message.content.header, { type: 'IMAGE', link: 'https://cdn.example.com/2.jpg' });
        assert.deepEqual(reply.body.items[1].message.content.buttons, [{ type: 'URL', text: 'Track order', url: 'https://shop.example.com/track/A-2' }]);
        const sendAt = new Date(Date.now() + 3_600_000).toISOString();
        const scheduled = await send({ template: name, ...item(4), to: '+5511987654324', sendAt });
        assert.equal(scheduled.status, 202, scheduled.text);
        const stored = await server.app.database.db.selectFrom('messages').select(['rich_parameters']).where('id', '=', scheduled.body.id).executeTakeFirstOrThrow();
        assert.deepEqual(JSON.parse(stored.rich_parameters!), {
          header: { type: 'image', link: 'https://cdn.example.com/4.jpg' },
          buttons: [{ subType: 'url', index: '0', text: 'A-4' }],
        });
      });
    });
  });
}
