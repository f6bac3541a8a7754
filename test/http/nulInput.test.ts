import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Customer input holding NUL (U+0000), which PostgreSQL's text cannot store, never reaches the
// database: validation refuses it with 400 `validation_failed` (`invalid_character`, the field
// named) in a body, a query or a path, whatever the field; nothing is stored, nothing is logged
// as an error. (What does not pass through validation, Meta's webhooks and Graph API answers,
// is made storable at the driver: test/providers/whatsappNul.test.ts.)

const NUL = '\u0000';

function assertRefused(reply: { status: number; text: string; body: any }, field: string): void {
  assert.equal(reply.status, 400, reply.text);
  assert.equal(reply.body.code, 'validation_failed', reply.text);
  assert.ok(
    reply.body.errors.some((error: any) => error.code === 'invalid_character' && error.field === field),
    `${field}: ${reply.text}`,
  );
}

for (const kind of databaseKinds()) {
  describe(`customer input holding NUL (${kind})`, () => {
    let server: TestServer;
    let key: string;
    let templateId: string;
    const errors: string[] = [];

    before(async () => {
      const logger = pino({ level: 'error' }, { write: (line: string) => errors.push(line) });
      // The sandbox's review never comes by itself: the template stays PENDING unless a review changes it.
      server = await startTestServer(kind, { logger, env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' } });
      ({ key } = await server.createProject());
      const template = await server.call('POST', '/v1/templates', {
        key,
        body: { name: 'nul_send', language: 'en_US', category: 'UTILITY', components: [{ type: 'HEADER', format: 'TEXT', text: 'For {{1}}' }, { type: 'BODY', text: 'Hello {{1}}, your order is ready.' }] },
      });
      assert.equal(template.status, 200, template.text);
      templateId = template.body.id;
    });
    after(() => server.close());

    it('in every kind of body field, keys included: 400, nothing stored', async () => {
      const send = { to: '+5511987654321', template: 'nul_send', language: 'en_US', variables: { '1': 'Ana' } };
      const template = { name: 'nul_texts', language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hello {{1}} there.' }] };
      const cases: [string, string, Record<string, unknown>, string, string?][] = [
        ['POST', '/v1/projects', { name: `Ac${NUL}me`, ownerEmail: 'owner@example.com' }, '/name', 'no key'],
        ['POST', '/v1/projects', { name: 'Acme', ownerEmail: `owner${NUL}@example.com` }, '/ownerEmail', 'no key'],
        ['POST', '/v1/api-keys', { name: `ci${NUL}` }, '/name'],
        ['POST', '/v1/templates', { ...template, name: `nul${NUL}name` }, '/name'],
        ['POST', '/v1/templates', { ...template, language: `en${NUL}` }, '/language'],
        ['POST', '/v1/templates', { ...template, components: [{ type: 'BODY', text: `Hello {{1}}, your${NUL}order.` }] }, '/components/0/text'],
        ['POST', '/v1/templates', { ...template, components: [{ type: 'BODY', text: 'Hello {{1}} there.' }, { type: 'FOOTER', text: `Thanks${NUL}` }] }, '/components/1/text'],
        ['POST', `/v1/test-helpers/templates/${templateId}/review`, { status: 'REJECTED', reason: `Bad${NUL}` }, '/reason'],
        ['POST', '/v1/messages', { ...send, variables: { '1': `A${NUL}na` } }, '/variables/1'],
        ['POST', '/v1/messages', { ...send, variables: { [`1${NUL}`]: 'Ana' } }, `/variables/1${NUL}`],
        ['POST', '/v1/messages', { ...send, headerVariables: { '1': `B${NUL}` } }, '/headerVariables/1'],
        ['POST', '/v1/messages', { ...send, to: `+55119876543${NUL}1` }, '/to'],
        ['POST', '/v1/messages', { ...send, template: `nul${NUL}send` }, '/template'],
        ['POST', '/v1/messages/batch', { template: 'nul_send', language: 'en_US', items: [{ to: '+5511987654321', variables: { '1': `C${NUL}` } }] }, '/items/0/variables/1'],
        ['POST', '/v1/suppressions', { phoneNumber: '+5511987650000', reason: `opt${NUL}out` }, '/reason'],
        ['POST', '/v1/webhook-endpoints', { url: 'https://hooks.example.com/svc', description: `main${NUL}` }, '/description'],
        ['POST', '/v1/webhook-endpoints', { url: `https://hooks.example.com/${NUL}` }, '/url'],
        ['PUT', '/v1/projects/me/provider-credentials', { providerPhoneNumberId: `1065${NUL}`, providerAccessToken: 'EAAGtoken' }, '/providerPhoneNumberId'],
        ['PUT', '/v1/projects/me/provider-credentials', { callbackUrl: `https://hooks.example.com/${NUL}` }, '/callbackUrl'],
      ];
      for (const [method, path, body, field, auth] of cases) {
        assertRefused(await server.call(method, path, { ...(auth === undefined && { key }), body }), field);
      }
      assert.equal((await server.call('GET', '/v1/messages', { key })).body.length, 0, 'no message was created');
      assert.equal((await server.call('GET', '/v1/suppressions', { key })).body.length, 0, 'no suppression was created');
      const templates = await server.call('GET', '/v1/templates', { key });
      assert.deepEqual(templates.body.map((item: any) => item.name), ['nul_send']);
      assert.equal(templates.body[0].status, 'PENDING', 'the review holding NUL changed nothing');
    });

    it('in a query or a path: 400', async () => {
      for (const [query, field] of [
        [`template=${encodeURIComponent(`a${NUL}b`)}`, 'query:/template'],
        [`to=${encodeURIComponent(`+55${NUL}`)}`, 'query:/to'],
        [`cursor=${encodeURIComponent(`x${NUL}`)}`, 'query:/cursor'],
      ] as const) {
        assertRefused(await server.call('GET', `/v1/messages?${query}`, { key }), field);
      }
      for (const path of [`/v1/messages/msg_${encodeURIComponent(NUL)}`, `/v1/templates/tpl_${encodeURIComponent(NUL)}`]) {
        const reply = await server.call('GET', path, { key });
        assert.equal(reply.status, 400, `${path}: ${reply.text}`);
        assert.equal(reply.body.code, 'validation_failed');
      }
    });

    it('logged no error', () => {
      assert.deepEqual(errors, []);
    });
  });
}
