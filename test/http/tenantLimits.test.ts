import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { databaseKinds } from '../support/databases.ts';
import { nextPageOf, type Reply } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Issue #10, point 9: a cap on each project's active keys, the key list paged like the others,
// and a rate limit per key.

const MAX_KEYS = 5;
// Small, so that a token refills only every 15 s: slower than any of these tests runs.
const PER_MINUTE = 4;

function assertProblem(reply: Reply, status: number, code: string) {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  assert.equal(reply.body.code, code);
  assert.equal(reply.body.requestId, reply.headers.get('x-request-id'));
}

async function createKeys(server: TestServer, key: string, count: number): Promise<any[]> {
  const created = [];
  for (let i = 0; i < count; i++) {
    const reply = await server.call('POST', '/v1/api-keys', { key, body: { name: `key-${i}` } });
    assert.equal(reply.status, 200, reply.text);
    created.push(reply.body);
  }
  return created;
}

for (const kind of databaseKinds()) {
  describe(`tenant limits (${kind})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind, { env: { SVC_MAX_API_KEYS_PER_PROJECT: String(MAX_KEYS) } });
    });
    after(() => server.close());

    describe('active keys per project', () => {
      it('refuses a key beyond the cap with 409 api_key_limit_reached, and takes one again after a revocation', async () => {
        const { key } = await server.createProject();
        const created = await createKeys(server, key, MAX_KEYS - 1);
        const refused = await server.call('POST', '/v1/api-keys', { key, body: { name: 'one too many' } });
        assertProblem(refused, 409, 'api_key_limit_reached');
        assert.match(refused.body.detail, new RegExp(`${MAX_KEYS} active API keys`));
        assert.ok(!refused.text.includes('svc_live_'));
        assert.equal((await server.call('GET', '/v1/api-keys', { key })).body.length, MAX_KEYS);

        assert.equal((await server.call('DELETE', `/v1/api-keys/${created[0].id}`, { key })).status, 200);
        const again = await server.call('POST', '/v1/api-keys', { key, body: { name: 'replacement' } });
        assert.equal(again.status, 200, again.text);
        assertProblem(await server.call('POST', '/v1/api-keys', { key, body: { name: 'x' } }), 409, 'api_key_limit_reached');
      });

      it('counts each project on its own', async () => {
        const full = await server.createProject('full');
        await createKeys(server, full.key, MAX_KEYS - 1);
        const other = await server.createProject('other');
        assert.equal((await server.call('POST', '/v1/api-keys', { key: other.key, body: { name: 'fine' } })).status, 200);
      });

      it('lets only as many concurrent creations succeed as the cap has room for', async () => {
        for (let round = 0; round < 3; round++) {
          const { key } = await server.createProject();
          await createKeys(server, key, MAX_KEYS - 3);
          const replies = await Promise.all(
            Array.from({ length: 12 }, (_, i) => server.call('POST', '/v1/api-keys', { key, body: { name: `race-${i}` } })),
          );
          const statuses = replies.map((reply) => reply.status).sort();
          assert.deepEqual(statuses, [...Array(2).fill(200), ...Array(10).fill(409)], JSON.stringify(statuses));
          assert.equal((await server.call('GET', '/v1/api-keys?limit=200', { key })).body.length, MAX_KEYS);
        }
      });

      it('documents the cap in OpenAPI', async () => {
        const doc = (await server.call('GET', '/openapi.json')).body;
        assert.match(doc.paths['/v1/api-keys'].post.responses['409'].description, /api_key_limit_reached/);
      });
    });

    describe('GET /v1/api-keys paging', () => {
      it('pages newest first through every active key, exactly once, without values', async () => {
        const roomy = await startTestServer(kind, { database: server.database });
        try {
          const { key, keyId } = await roomy.createProject();
          const created = await createKeys(roomy, key, 6);
          await roomy.call('DELETE', `/v1/api-keys/${created[2].id}`, { key });
          const expected = [...created.filter((_, i) => i !== 2).map((item) => item.id).reverse(), keyId];
          const seen: string[] = [];
          let path: string | undefined = '/v1/api-keys?limit=2';
          let pages = 0;
          while (path !== undefined) {
            const reply = await roomy.call('GET', path, { key });
            assert.equal(reply.status, 200, reply.text);
            assert.ok(reply.body.length <= 2);
            for (const item of reply.body) {
              assert.deepEqual(Object.keys(item).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'prefix']);
            }
            assert.ok(!reply.text.includes(key) && !created.some((item) => reply.text.includes(item.key)));
            seen.push(...reply.body.map((item: any) => item.id));
            path = nextPageOf(reply);
            pages++;
          }
          assert.deepEqual(seen, expected);
          assert.equal(pages, 3);
          const whole = await roomy.call('GET', '/v1/api-keys', { key });
          assert.deepEqual(
            whole.body.map((item: any) => item.id),
            expected,
          );
          assert.equal(whole.headers.get('link'), null);
        } finally {
          await roomy.app.stop();
        }
      });

      it('validates limit, cursor and unknown parameters', async () => {
        const { key } = await server.createProject();
        for (const query of ['limit=0', 'limit=201', 'limit=x', 'cursor=bm90LWFuLWlk', 'status=active']) {
          assertProblem(await server.call('GET', `/v1/api-keys?${query}`, { key }), 400, 'validation_failed');
        }
      });

      it("never lists another project's keys, whatever the cursor", async () => {
        const alice = await server.createProject('alice');
        const bob = await server.createProject('bob');
        const bobKeys = await createKeys(server, bob.key, 2);
        const bobPage = await server.call('GET', '/v1/api-keys?limit=1', { key: bob.key });
        const cursor = new URL(/^<([^>]+)>/.exec(bobPage.headers.get('link')!)![1]!).searchParams.get('cursor');
        const reply = await server.call('GET', `/v1/api-keys?limit=5&cursor=${cursor}`, { key: alice.key });
        assert.equal(reply.status, 200);
        assert.deepEqual(
          reply.body.map((item: any) => item.id),
          [alice.keyId],
        );
        assert.ok(!bobKeys.some((item) => reply.text.includes(item.id)));
      });
    });

    describe('rate limit per key', () => {
      let limited: TestServer;
      before(async () => {
        limited = await startTestServer(kind, {
          database: server.database,
          env: { SVC_API_RATE_LIMIT: String(PER_MINUTE) },
        });
      });
      after(() => limited.app.stop());

      it('announces the budget on every answer and refuses beyond it with 429 rate_limited', async () => {
        const { key } = await limited.createProject();
        const remaining: number[] = [];
        for (let i = 0; i < PER_MINUTE - 1; i++) {
          const reply = await limited.call('GET', '/v1/projects/me', { key });
          assert.equal(reply.status, 200);
          assert.equal(reply.headers.get('ratelimit-policy'), `"api";q=${PER_MINUTE};w=60`);
          remaining.push(Number(/^"api";r=(\d+);t=\d+$/.exec(reply.headers.get('ratelimit') ?? '')?.[1]));
        }
        assert.deepEqual(remaining, Array.from({ length: PER_MINUTE - 1 }, (_, i) => PER_MINUTE - 1 - i));
        // The last token goes to an error answer: it counts, and carries the headers too.
        const notFound = await limited.call('GET', '/v1/messages/msg_unknown', { key });
        assertProblem(notFound, 404, 'not_found');
        assert.match(notFound.headers.get('ratelimit') ?? '', /^"api";r=0;t=\d+$/);

        const refused = await limited.call('POST', '/v1/api-keys', { key, body: { name: 'nope' } });
        assertProblem(refused, 429, 'rate_limited');
        assert.ok(Number(refused.headers.get('retry-after')) >= 1);
        assert.match(refused.headers.get('ratelimit') ?? '', /^"api";r=0;t=\d+$/);
        assert.equal(refused.headers.get('ratelimit-policy'), `"api";q=${PER_MINUTE};w=60`);
        const keys = await limited.call('GET', '/v1/api-keys', { key });
        assert.equal(keys.status, 429);
        // Refused requests did nothing: the project still has its one key.
        assert.equal((await server.call('GET', '/v1/api-keys', { key })).body.length, 1);
      });

      it('keeps one budget per key, and leaves sign-up and bad keys to their own rules', async () => {
        const { key } = await limited.createProject();
        const second = (await limited.call('POST', '/v1/api-keys', { key, body: { name: 'second' } })).body;
        for (let i = 0; i < PER_MINUTE; i++) await limited.call('GET', '/v1/projects/me', { key });
        assert.equal((await limited.call('GET', '/v1/projects/me', { key })).status, 429);
        assert.equal((await limited.call('GET', '/v1/projects/me', { key: second.key })).status, 200);
        assert.equal((await limited.createProject()).key.startsWith('svc_live_'), true);
        const forged = await limited.call('GET', '/v1/projects/me', { key: 'svc_live_' + 'z'.repeat(40) });
        assertProblem(forged, 401, 'unauthorized');
        assert.equal(forged.headers.get('ratelimit'), null);
      });
    });
  });
}

describe('limit settings', () => {
  it('default to 100 active keys per project and 6,000 requests per key per minute', () => {
    const config = loadConfig({});
    assert.equal(config.maxApiKeysPerProject, 100);
    assert.equal(config.apiRateLimitPerMinute, 6000);
    const set = loadConfig({ SVC_MAX_API_KEYS_PER_PROJECT: '3', SVC_API_RATE_LIMIT: '60' });
    assert.equal(set.maxApiKeysPerProject, 3);
    assert.equal(set.apiRateLimitPerMinute, 60);
  });

  it('refuse invalid values, naming the variable', () => {
    for (const [name, value] of [
      ['SVC_MAX_API_KEYS_PER_PROJECT', '0'],
      ['SVC_MAX_API_KEYS_PER_PROJECT', 'many'],
      ['SVC_API_RATE_LIMIT', '0'],
      ['SVC_API_RATE_LIMIT', '1.5'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: Error) => error instanceof ConfigError && error.message.includes(name),
        `${name}=${value}`,
      );
    }
  });
});
