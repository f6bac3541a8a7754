import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp } from '../../src/app.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { checkCallbackUrl } from '../../src/domain/callbackUrl.ts';
import { databaseKinds } from '../support/databases.ts';
import { nextPageOf, type Reply } from '../support/http.ts';
import { rawRequest } from '../support/rawHttp.ts';
import { createSender, type Sender, sendBody } from '../support/sending.ts';
import { startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from '../support/server.ts';

// Issue #10, points 2, 3, 6, 7 and 8: hostile input is refused as 400, never a 500 or a silent
// misreading; absolute links never come from request headers.

function assertProblem(reply: Reply, status: number, code: string) {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  assert.equal(reply.body.code, code);
  assert.equal(reply.body.requestId, reply.headers.get('x-request-id'));
}

const NUL = '\u0000';

for (const kind of databaseKinds()) {
  describe(`hostile input (${kind})`, () => {
    let server: TestServer;
    let sender: Sender;
    let messageId: string;
    before(async () => {
      server = await startTestServer(kind);
      sender = await createSender(server);
      const sent = await server.call('POST', '/v1/messages', { key: sender.key, body: sendBody(sender) });
      assert.equal(sent.status, 202);
      messageId = sent.body.id;
    });
    after(() => server.close());

    describe('NUL characters (point 2)', () => {
      it('are refused as 400 invalid_character in every body, unauthenticated too, and nothing is stored', async () => {
        const key = sender.key;
        const cases: [string, string, unknown, string, string?][] = [
          ['POST', '/v1/projects', { name: `a${NUL}b`, ownerEmail: 'a@example.com' }, '/name'],
          ['POST', '/v1/projects', { name: 'a', ownerEmail: `a${NUL}@example.com` }, '/ownerEmail'],
          ['POST', '/v1/api-keys', { name: `ci${NUL}` }, '/name', key],
          [
            'POST',
            '/v1/templates',
            { name: `t${NUL}`, language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi' }] },
            '/name',
            key,
          ],
          [
            'POST',
            '/v1/templates',
            { name: 'nul_text', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: `Hi${NUL}` }] },
            '/components/0/text',
            key,
          ],
          ['POST', '/v1/messages', { ...sendBody(sender), variables: { '1': `A${NUL}na`, '2': 'x' } }, '/variables/1', key],
          ['POST', '/v1/messages', { ...sendBody(sender), to: `+5511987654321${NUL}` }, '/to', key],
          ['POST', '/v1/messages', { ...sendBody(sender), template: `order_update${NUL}` }, '/template', key],
          ['PUT', '/v1/projects/me/provider-credentials', { providerPhoneNumberId: `1${NUL}`, providerAccessToken: 't' }, '/providerPhoneNumberId', key],
          ['PUT', '/v1/projects/me/provider-credentials', { providerPhoneNumberId: '1', providerAccessToken: `t${NUL}` }, '/providerAccessToken', key],
          ['PUT', '/v1/projects/me/provider-credentials', { callbackUrl: `https://example.com/${NUL}` }, '/callbackUrl', key],
          ['POST', `/v1/test-helpers/messages/${messageId}/advance`, { status: `SENT${NUL}` }, '/status', key],
        ];
        for (const [method, path, body, field, withKey] of cases) {
          const reply = await server.call(method, path, { key: withKey, body });
          assertProblem(reply, 400, 'validation_failed');
          assert.ok(
            reply.body.errors.some((error: any) => error.field === field && error.code === 'invalid_character'),
            `${method} ${path} ${field}: ${reply.text}`,
          );
        }
        const templates = await server.call('GET', '/v1/templates', { key });
        assert.deepEqual(
          templates.body.map((template: any) => template.name),
          [sender.templateName],
        );
        const keys = await server.call('GET', '/v1/api-keys', { key });
        assert.equal(keys.body.length, 1);
        const messages = await server.call('GET', '/v1/messages', { key });
        assert.deepEqual(
          messages.body.map((message: any) => message.id),
          [messageId],
        );
      });

      it('are refused in nested objects and in object keys', async () => {
        const reply = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: { ...sendBody(sender), headerVariables: { [`1${NUL}`]: 'x' }, variables: { '1': 'Ana', '2': `${NUL}` } },
        });
        assertProblem(reply, 400, 'validation_failed');
        const nul = reply.body.errors.filter((error: any) => error.code === 'invalid_character').map((error: any) => error.field);
        assert.deepEqual(nul, ['/variables/2', `/headerVariables/1${NUL}`]);
      });

      it('are refused in path parameters and query strings (%00), before any query runs', async () => {
        const key = sender.key;
        const cases: [string, string, string][] = [
          ['GET', '/v1/messages/%00', 'params:/id'],
          ['GET', `/v1/messages/${messageId}%00`, 'params:/id'],
          ['GET', '/v1/messages/a%00b/events', 'params:/id'],
          ['DELETE', '/v1/api-keys/%00', 'params:/id'],
          ['GET', '/v1/templates/%00', 'params:/id'],
          ['DELETE', '/v1/templates/tpl_%00', 'params:/id'],
          ['GET', '/v1/webhook-deliveries/%00', 'params:/id'],
          ['POST', '/v1/webhook-deliveries/%00/retry', 'params:/id'],
          ['GET', '/v1/messages?to=%00', 'query:/to'],
          ['GET', '/v1/messages?template=a%00', 'query:/template'],
          ['GET', '/v1/messages?cursor=%00', 'query:/cursor'],
          ['GET', '/v1/webhook-deliveries?messageId=msg_%00', 'query:/messageId'],
          ['GET', '/v1/api-keys?cursor=%00', 'query:/cursor'],
          ['GET', '/v1/templates?cursor=x%00', 'query:/cursor'],
        ];
        for (const [method, path, field] of cases) {
          const reply = await server.call(method, path, { key });
          assertProblem(reply, 400, 'validation_failed');
          assert.deepEqual(
            reply.body.errors.map((error: any) => [error.field, error.code]),
            [[field, 'invalid_character']],
            `${method} ${path}`,
          );
        }
        const review = await server.call('POST', '/v1/test-helpers/templates/%00/review', {
          key,
          body: { status: 'APPROVED' },
        });
        assertProblem(review, 400, 'validation_failed');
      });

      it('still answers 401 before looking at a NUL when the key is missing', async () => {
        assertProblem(await server.call('GET', '/v1/messages/%00'), 401, 'unauthorized');
      });
    });

    describe('dates (point 3)', () => {
      const unreadable = [
        '2016-12-31T23:59:60Z', // a leap second: valid RFC 3339, unreadable to Date.parse
        '2026-13-01T00:00:00Z',
        '2026-02-30T00:00:00Z',
        '2025-02-29T00:00:00Z',
        '2026-01-01T24:00:00Z',
        '2026-01-01T10:00:00+24:00',
        '2026-01-01T10:00:00',
        '2026-01-01',
        'yesterday',
        '1767225600000',
      ];

      it('refuses what is not a real calendar time as 400 on every date filter', async () => {
        for (const path of ['/v1/messages', '/v1/webhook-deliveries']) {
          for (const parameter of ['since', 'until']) {
            for (const value of unreadable) {
              const reply = await server.call('GET', `${path}?${parameter}=${encodeURIComponent(value)}`, { key: sender.key });
              assertProblem(reply, 400, 'validation_failed');
              assert.deepEqual(
                reply.body.errors.map((error: any) => error.field),
                [`query:/${parameter}`],
                `${path} ${parameter}=${value}`,
              );
            }
          }
        }
      });

      it('accepts real times, in any offset, and filters by them', async () => {
        const queuedAt = Date.parse((await server.call('GET', `/v1/messages/${messageId}`, { key: sender.key })).body.queuedAt);
        const before = new Date(queuedAt - 60_000);
        const cases: [string, string, boolean][] = [
          ['since', before.toISOString(), true],
          ['since', '2099-01-01T00:00:00Z', false],
          ['until', '2024-02-29T23:59:59.999Z', false],
          ['until', '2099-12-31T23:59:59+23:59', true],
          ['since', before.toISOString().replace('Z', '+00:00'), true],
        ];
        for (const [parameter, value, listed] of cases) {
          const reply = await server.call('GET', `/v1/messages?${parameter}=${encodeURIComponent(value)}`, { key: sender.key });
          assert.equal(reply.status, 200, `${parameter}=${value}: ${reply.text}`);
          assert.equal(reply.body.some((message: any) => message.id === messageId), listed, `${parameter}=${value}`);
          const deliveries = await server.call('GET', `/v1/webhook-deliveries?${parameter}=${encodeURIComponent(value)}`, {
            key: sender.key,
          });
          assert.equal(deliveries.status, 200, deliveries.text);
        }
      });
    });

    describe('two Authorization headers (point 6)', () => {
      it('are refused with 400 bad_request, whichever comes first', async () => {
        for (const [first, second] of [
          [sender.key, 'svc_live_' + 'z'.repeat(40)],
          ['svc_live_' + 'z'.repeat(40), sender.key],
          [sender.key, sender.key],
        ]) {
          const reply = await rawRequest(server.url, [
            'GET /v1/projects/me HTTP/1.1',
            'Host: 127.0.0.1',
            `Authorization: Bearer ${first}`,
            `authorization: Bearer ${second}`,
          ]);
          assert.equal(reply.status, 400);
          assert.equal(reply.headers['content-type'], 'application/problem+json');
          assert.equal(reply.json().code, 'bad_request');
          assert.equal(reply.json().requestId, reply.headers['x-request-id']);
          assert.ok(!reply.body.includes(sender.key));
        }
        const one = await rawRequest(server.url, [
          'GET /v1/projects/me HTTP/1.1',
          'Host: 127.0.0.1',
          `Authorization: Bearer ${sender.key}`,
        ]);
        assert.equal(one.status, 200);
      });

      it('are refused on writes too, and nothing is written', async () => {
        const reply = await rawRequest(
          server.url,
          [
            'POST /v1/api-keys HTTP/1.1',
            'Host: 127.0.0.1',
            'Content-Type: application/json',
            `Authorization: Bearer ${sender.key}`,
            `Authorization: Bearer ${sender.key}`,
          ],
          JSON.stringify({ name: 'twice' }),
        );
        assert.equal(reply.status, 400);
        const keys = await server.call('GET', '/v1/api-keys', { key: sender.key });
        assert.ok(!keys.body.some((key: any) => key.name === 'twice'));
      });

      it('are refused on sign-up when it is closed', async () => {
        const closed = await startTestServer(kind, {
          database: server.database,
          env: { SVC_SIGNUP: 'closed', SVC_ADMIN_TOKEN: 'admin-secret' },
        });
        try {
          const body = JSON.stringify({ name: 'x', ownerEmail: 'a@example.com' });
          const head = ['POST /v1/projects HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json'];
          const twice = await rawRequest(closed.url, [...head, 'Authorization: Bearer admin-secret', 'Authorization: Bearer other'], body);
          assert.equal(twice.status, 400);
          assert.equal(twice.json().code, 'bad_request');
          const once = await rawRequest(closed.url, [...head, 'Authorization: Bearer admin-secret'], body);
          assert.equal(once.status, 200);
        } finally {
          await closed.app.stop();
        }
      });
    });

    describe('Link headers (point 7)', () => {
      async function fourPages(target: TestServer, headers: string[]) {
        const { key } = await target.createProject();
        for (const name of ['a', 'b']) await target.call('POST', '/v1/api-keys', { key, body: { name } });
        const links: string[] = [];
        for (const path of ['/v1/api-keys?limit=1', '/v1/templates?limit=1', '/v1/messages?limit=1', '/v1/webhook-deliveries?limit=1']) {
          const reply = await rawRequest(target.url, [`GET ${path} HTTP/1.1`, ...headers, `Authorization: Bearer ${key}`]);
          assert.equal(reply.status, 200, reply.body);
          if (reply.headers.link) links.push(reply.headers.link);
        }
        return links;
      }

      it('are built on http://HOST:PORT by default, whatever Host and X-Forwarded-* say', async () => {
        const proxied = await startTestServer(kind, { database: server.database, env: { SVC_TRUST_PROXY: 'true' } });
        try {
          const links = await fourPages(proxied, [
            'Host: evil.example',
            'X-Forwarded-Host: evil2.example',
            'X-Forwarded-Proto: https',
          ]);
          assert.equal(links.length, 1);
          assert.match(links[0]!, new RegExp(`^<${proxied.url}/v1/api-keys\\?limit=1&cursor=[A-Za-z0-9_-]+>; rel="next"$`));
        } finally {
          await proxied.app.stop();
        }
      });

      it('are built on SVC_PUBLIC_URL when it is set, path prefix included', async () => {
        const published = await startTestServer(kind, {
          database: server.database,
          env: { SVC_PUBLIC_URL: 'https://api.example.com/svc/' },
        });
        try {
          const links = await fourPages(published, ['Host: evil.example']);
          assert.equal(links.length, 1);
          assert.match(links[0]!, /^<https:\/\/api\.example\.com\/svc\/v1\/api-keys\?limit=1&cursor=[A-Za-z0-9_-]+>; rel="next"$/);
        } finally {
          await published.app.stop();
        }
      });

      it('are built on HOST:PORT for in-process requests too (app.inject, not listening)', async () => {
        const { key } = await server.createProject();
        await server.call('POST', '/v1/api-keys', { key, body: { name: 'second' } });
        const config = loadConfig({
          SVC_LOG_LEVEL: 'silent',
          SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
          SVC_DATABASE_URL: server.database.url,
          PORT: '8123',
        });
        const app = await createApp(config, { role: 'api' });
        try {
          const reply = await app.http!.inject({
            method: 'GET',
            url: '/v1/api-keys?limit=1',
            headers: { authorization: `Bearer ${key}`, host: 'evil.example' },
          });
          assert.equal(reply.statusCode, 200, reply.body);
          assert.match(String(reply.headers.link), /^<http:\/\/127\.0\.0\.1:8123\/v1\/api-keys\?limit=1&cursor=/);
        } finally {
          await app.stop();
        }
      });

      it('are followed to the end on every list', async () => {
        const { key } = await server.createProject();
        for (const name of ['a', 'b', 'c']) await server.call('POST', '/v1/api-keys', { key, body: { name } });
        const seen: string[] = [];
        let path: string | undefined = '/v1/api-keys?limit=2';
        while (path !== undefined) {
          const reply = await server.call('GET', path, { key });
          seen.push(...reply.body.map((item: any) => item.name));
          const link = reply.headers.get('link');
          if (link) assert.ok(link.startsWith(`<${server.url}/`), link);
          path = nextPageOf(reply);
        }
        assert.deepEqual(seen, ['c', 'b', 'a', 'default']);
      });
    });

    describe('callback URLs (point 8)', () => {
      it('refuses an empty authority (https:///host/path) as invalid_url', async () => {
        for (const callbackUrl of ['https:///hooks.example.com/svc', 'https:////hooks.example.com', 'http:///127.0.0.1:9000/hook']) {
          const reply = await server.call('PUT', '/v1/projects/me/provider-credentials', {
            key: sender.key,
            body: { callbackUrl },
          });
          assertProblem(reply, 400, 'validation_failed');
          assert.deepEqual(
            reply.body.errors.map((error: any) => [error.field, error.code]),
            [['/callbackUrl', 'invalid_url']],
            callbackUrl,
          );
        }
        const saved = await server.call('GET', '/v1/projects/me', { key: sender.key });
        assert.equal(saved.body.callbackUrl, undefined);
      });
    });
  });
}

describe('callback URL syntax (point 8)', () => {
  it('needs a non-empty authority, with or without http allowed', () => {
    for (const allowHttp of [false, true]) {
      for (const raw of ['https:///host/path', 'https:////host', 'https://', 'https:///']) {
        const checked = checkCallbackUrl(raw, { allowHttp });
        assert.ok(!checked.ok && checked.rule === 'invalid_url', `${raw} ${allowHttp}`);
      }
      assert.ok(checkCallbackUrl('https://host/path', { allowHttp }).ok);
    }
  });
});

describe('SVC_PUBLIC_URL (point 7)', () => {
  it('takes an absolute http(s) URL, without a trailing slash', () => {
    assert.equal(loadConfig({}).publicUrl, undefined);
    assert.equal(loadConfig({ SVC_PUBLIC_URL: 'https://api.example.com/' }).publicUrl, 'https://api.example.com');
    assert.equal(loadConfig({ SVC_PUBLIC_URL: 'http://10.0.0.1:8080/svc' }).publicUrl, 'http://10.0.0.1:8080/svc');
  });

  it('refuses anything else, naming the variable', () => {
    for (const value of [
      'api.example.com',
      'ftp://api.example.com',
      'https:///api.example.com',
      'https:api.example.com',
      'https://user:pw@api.example.com',
      'https://api.example.com/?x=1',
      'https://api.example.com/#top',
    ]) {
      assert.throws(
        () => loadConfig({ SVC_PUBLIC_URL: value }),
        (error: Error) => error instanceof ConfigError && error.message.includes('SVC_PUBLIC_URL'),
        value,
      );
    }
  });
});
