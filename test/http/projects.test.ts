import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { inlineRefs } from '../support/openapi.ts';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

for (const kind of databaseKinds()) {
  describe(`projects (${kind})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind);
    });
    after(() => server.close());

    describe('POST /v1/projects', () => {
      it('creates a project with its first key, shown once', async () => {
        const reply = await server.call('POST', '/v1/projects', {
          body: { name: 'Acme Shop', ownerEmail: 'ops@acme.example' },
        });
        assert.equal(reply.status, 200);
        const body = reply.body;
        assert.match(body.projectId, /^proj_[0-9a-z]{26}$/);
        assert.equal(body.id, body.projectId);
        assert.equal(body.name, 'Acme Shop');
        assert.equal(body.ownerEmail, 'ops@acme.example');
        assert.match(body.createdAt, ISO_MS);
        assert.match(body.apiKey, /^svc_live_[0-9A-Za-z]{32,}$/);
        assert.match(body.apiKeyId, /^key_/);
        assert.equal(reply.headers.get('ratelimit-policy'), '"signup";q=100000;w=60');
      });

      it('rejects missing, empty, overlong and mistyped fields', async () => {
        const cases: [unknown, string][] = [
          [{ ownerEmail: 'a@example.com' }, '/name'],
          [{ name: 'x' }, '/ownerEmail'],
          [{ name: '', ownerEmail: 'a@example.com' }, '/name'],
          [{ name: '   ', ownerEmail: 'a@example.com' }, '/name'],
          [{ name: 'x'.repeat(201), ownerEmail: 'a@example.com' }, '/name'],
          [{ name: 'x', ownerEmail: 'not-an-email' }, '/ownerEmail'],
          [{ name: ['x'], ownerEmail: 'a@example.com' }, '/name'],
          [{ name: 'x', ownerEmail: 'a@example.com', apiKey: 'svc_live_x' }, '/apiKey'],
        ];
        for (const [body, field] of cases) {
          const reply = await server.call('POST', '/v1/projects', { body });
          assert.equal(reply.status, 400, JSON.stringify(body));
          assert.equal(reply.body.code, 'validation_failed');
          assert.ok(
            reply.body.errors.some((error: any) => error.field === field),
            `${JSON.stringify(body)} → ${JSON.stringify(reply.body.errors)}`,
          );
        }
      });

      it('rejects a JSON body that is not an object', async () => {
        for (const raw of ['[]', '"x"', '42', 'null']) {
          const reply = await server.call('POST', '/v1/projects', {
            raw,
            headers: { 'content-type': 'application/json' },
          });
          assert.equal(reply.status, 400, raw);
        }
      });
    });

    describe('GET /v1/projects/me', () => {
      it('returns the project of the key, without optional fields until configured', async () => {
        const { key, projectId } = await server.createProject('Me Corp');
        const reply = await server.call('GET', '/v1/projects/me', { key });
        assert.equal(reply.status, 200);
        assert.equal(reply.body.projectId, projectId);
        assert.equal(reply.body.id, projectId);
        assert.equal(reply.body.name, 'Me Corp');
        assert.equal(reply.body.ownerEmail, 'owner@example.com');
        assert.match(reply.body.createdAt, ISO_MS);
        assert.ok(!('providerPhoneNumberId' in reply.body));
        assert.ok(!('callbackUrl' in reply.body));
        assert.ok(!('providerAccessToken' in reply.body));
        assert.ok(!('apiKey' in reply.body));
        assert.ok(!('provider' in reply.body));
        // Which provider sends (SVC_PROVIDER, sandbox by default): the console's "sandbox" badge reads it.
        assert.equal(reply.body.providerName, 'sandbox');
        const doc = inlineRefs((await server.call('GET', '/openapi.json')).body);
        const schema = doc.paths['/v1/projects/me'].get.responses['200'].content['application/json'].schema;
        assert.deepEqual(schema.properties.providerName.enum, ['sandbox', 'whatsapp']);
      });

      it('describes the provider account once credentials are saved, for the key’s project only', async () => {
        const mine = await server.createProject('Mine');
        const theirs = await server.createProject('Theirs');
        const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', {
          key: mine.key,
          body: { providerPhoneNumberId: '106540352242922', providerAccessToken: 'EAAG-sandbox', providerBusinessAccountId: '102290129340398' },
        });
        assert.equal(saved.status, 200, saved.text);
        const reply = await server.call('GET', '/v1/projects/me', { key: mine.key });
        assert.deepEqual(Object.keys(reply.body.provider).sort(), [
          'businessAccountId',
          'checkedAt',
          'displayPhoneNumber',
          'messagesPerSecond',
          'qualityRating',
          'status',
          'verifiedName',
          'webhooksSubscribed',
        ]);
        assert.equal(reply.body.provider.businessAccountId, '102290129340398');
        assert.equal(reply.body.provider.status, 'ready');
        assert.ok(!reply.text.includes('EAAG-sandbox'));
        assert.ok(!('provider' in (await server.call('GET', '/v1/projects/me', { key: theirs.key })).body));
        const doc = inlineRefs((await server.call('GET', '/openapi.json')).body);
        const schema = doc.paths['/v1/projects/me'].get.responses['200'].content['application/json'].schema;
        assert.ok(schema.properties.provider.properties.problem);
      });

      it('is 401 with WWW-Authenticate without a valid key', async () => {
        const { key } = await server.createProject();
        const forged = 'svc_live_' + 'A'.repeat(43);
        const attempts: Record<string, string>[] = [
          {},
          { authorization: '' },
          { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
          { authorization: `Bearer ${forged}` },
          { authorization: 'Bearer svc_test_abc' },
          { authorization: `Bearer ${key}x` },
          { authorization: `Bearer ${key.slice(0, -1)}` },
          { authorization: `Bearer ${key} extra` },
          { authorization: `Bearer ${key}'; drop table api_keys; --` },
        ];
        for (const headers of attempts) {
          const reply = await server.call('GET', '/v1/projects/me', { headers });
          assert.equal(reply.status, 401, JSON.stringify(headers));
          assert.equal(reply.body.code, 'unauthorized');
          assert.equal(reply.headers.get('www-authenticate'), 'Bearer');
        }
        const lower = await server.call('GET', '/v1/projects/me', {
          headers: { authorization: `bearer ${key}` },
        });
        assert.equal(lower.status, 200);
      });
    });
  });

  describe(`sign-up guard (${kind})`, () => {
    it('rate-limits project creation per client address with RateLimit headers', async () => {
      const server = await startTestServer(kind, { env: { SVC_SIGNUP_RATE_LIMIT: '3' } });
      try {
        const statuses: number[] = [];
        let limited: any;
        for (let i = 0; i < 5; i++) {
          const reply = await server.call('POST', '/v1/projects', {
            body: { name: 'x', ownerEmail: 'a@example.com' },
          });
          statuses.push(reply.status);
          if (reply.status === 429) limited = reply;
        }
        assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
        assert.equal(limited.body.code, 'rate_limited');
        assert.ok(Number(limited.headers.get('retry-after')) >= 1);
        assert.equal(limited.headers.get('ratelimit-policy'), '"signup";q=3;w=60');
        assert.match(limited.headers.get('ratelimit'), /^"signup";r=0;t=\d+$/);
      } finally {
        await server.close();
      }
    });

    it('with SVC_SIGNUP=closed requires the admin token', async () => {
      const adminToken = 'admin-token-0123456789';
      const server = await startTestServer(kind, {
        env: { SVC_SIGNUP: 'closed', SVC_ADMIN_TOKEN: adminToken },
      });
      try {
        const body = { name: 'x', ownerEmail: 'a@example.com' };
        const anonymous = await server.call('POST', '/v1/projects', { body });
        assert.equal(anonymous.status, 401);
        const wrong = await server.call('POST', '/v1/projects', { body, key: 'admin-token-0123456780' });
        assert.equal(wrong.status, 401);
        const admin = await server.call('POST', '/v1/projects', { body, key: adminToken });
        assert.equal(admin.status, 200);
        assert.match(admin.body.apiKey, /^svc_live_/);
      } finally {
        await server.close();
      }
    });
  });
}
