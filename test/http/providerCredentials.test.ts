import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { openSecret } from '../../src/domain/secretBox.ts';
import { databaseKinds } from '../support/databases.ts';
import { writeGate } from '../support/writeGate.ts';
import { startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from '../support/server.ts';

const PATH = '/v1/projects/me/provider-credentials';
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const KEY = Buffer.from(TEST_ENCRYPTION_KEY, 'base64');

/** A token that cannot appear anywhere by chance, shaped like Meta's. */
function newToken(): string {
  return 'EAAG' + randomBytes(48).toString('hex');
}

function projectRow(server: TestServer, projectId: string) {
  return server.app.database.db
    .selectFrom('projects')
    .selectAll()
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
}

function assertValidation(reply: { status: number; body: any }, field: string, code?: string) {
  assert.equal(reply.status, 400, JSON.stringify(reply.body));
  assert.equal(reply.body.code, 'validation_failed');
  const match = reply.body.errors.find((error: any) => error.field === field);
  assert.ok(match, `expected an error on ${field}: ${JSON.stringify(reply.body.errors)}`);
  if (code !== undefined) assert.equal(match.code, code, JSON.stringify(match));
  assert.equal(typeof match.message, 'string');
  return match;
}

for (const kind of databaseKinds()) {
  describe(`provider credentials (${kind})`, () => {
    // Every log line the service writes, at the most verbose level, to check no secret is in one.
    const logLines: string[] = [];
    let server: TestServer;
    let strict: TestServer;
    before(async () => {
      const logger = pino({ level: 'trace' }, { write: (line: string) => logLines.push(line) });
      server = await startTestServer(kind, { logger });
      strict = await startTestServer(kind, { env: { SVC_ALLOW_PRIVATE_CALLBACKS: 'false' } });
    });
    after(async () => {
      await server.close();
      await strict.close();
    });

    describe('happy path', () => {
      it('saves both credentials on the first call and answers without the token', async () => {
        const { projectId, key } = await server.createProject();
        const token = newToken();
        const reply = await server.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: '106540352242922', providerAccessToken: token },
        });
        assert.equal(reply.status, 200);
        assert.deepEqual(Object.keys(reply.body).sort(), ['id', 'projectId', 'provider', 'providerPhoneNumberId', 'updatedAt']);
        assert.equal(reply.body.projectId, projectId);
        assert.equal(reply.body.id, projectId, 'id and projectId are the same value (CONTRACT §1)');
        assert.equal(reply.body.providerPhoneNumberId, '106540352242922');
        assert.match(reply.body.updatedAt, ISO_MS);
        assert.ok(!reply.text.includes(token));

        const me = await server.call('GET', '/v1/projects/me', { key });
        assert.equal(me.body.providerPhoneNumberId, '106540352242922');
        assert.ok(!('callbackUrl' in me.body));
        assert.equal(me.body.updatedAt, reply.body.updatedAt);
        assert.ok(!me.text.includes(token));
        assert.deepEqual(me.body.provider, reply.body.provider);
      });

      it('describes the sandbox account plausibly, whatever the values, and takes a business account id', async () => {
        const { key } = await server.createProject();
        const reply = await server.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: 'any-id', providerAccessToken: 'any-token' },
        });
        assert.equal(reply.status, 200, reply.text);
        const { provider } = reply.body;
        assert.equal(provider.status, 'ready');
        assert.match(provider.businessAccountId, /^\d{15}$/);
        assert.match(provider.displayPhoneNumber, /^\+1 555-\d{3}-\d{4}$/);
        assert.equal(provider.verifiedName, 'Sandbox Business');
        assert.equal(provider.qualityRating, 'GREEN');
        assert.equal(provider.webhooksSubscribed, true);
        assert.equal(provider.messagesPerSecond, 80, 'SVC_PROVIDER_MAX_MPS: the sandbox sets no throughput of its own');
        assert.ok(!('problem' in provider));
        assert.match(provider.checkedAt, ISO_MS);
        // Alone, with credentials saved: re-checked with them.
        const waba = await server.call('PUT', PATH, { key, body: { providerBusinessAccountId: '102290129340398' } });
        assert.equal(waba.status, 200, waba.text);
        assert.equal(waba.body.provider.businessAccountId, '102290129340398');
        assert.equal(waba.body.providerPhoneNumberId, 'any-id');
        assert.equal((await server.call('GET', '/v1/projects/me', { key })).body.provider.businessAccountId, '102290129340398');
      });

      it('saves a callback URL with the credentials, then alone, then removes it with null', async () => {
        const { projectId, key } = await server.createProject();
        const token = newToken();
        const first = await server.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: '111', providerAccessToken: token, callbackUrl: 'http://127.0.0.1:9/hook' },
        });
        assert.equal(first.status, 200);
        assert.equal(first.body.callbackUrl, 'http://127.0.0.1:9/hook');
        const savedAt = (await projectRow(server, projectId)).credentials_updated_at;

        const urlOnly = await server.call('PUT', PATH, { key, body: { callbackUrl: 'https://127.0.0.1/other?x=1' } });
        assert.equal(urlOnly.status, 200);
        assert.equal(urlOnly.body.callbackUrl, 'https://127.0.0.1/other?x=1');
        assert.equal(urlOnly.body.providerPhoneNumberId, '111');
        const row = await projectRow(server, projectId);
        assert.equal(openSecret(KEY, row.provider_access_token_enc!), token, 'the token is untouched');
        assert.equal(row.credentials_updated_at, savedAt, 'the credentials did not change');
        assert.equal((await server.call('GET', '/v1/projects/me', { key })).body.callbackUrl, 'https://127.0.0.1/other?x=1');

        const removed = await server.call('PUT', PATH, { key, body: { callbackUrl: null } });
        assert.equal(removed.status, 200);
        assert.ok(!('callbackUrl' in removed.body));
        assert.equal(removed.body.providerPhoneNumberId, '111');
        const me = await server.call('GET', '/v1/projects/me', { key });
        assert.ok(!('callbackUrl' in me.body));
        assert.equal(me.body.providerPhoneNumberId, '111');
        assert.equal((await projectRow(server, projectId)).callback_url, null);
      });

      it('rotates the token with new credentials and keeps the callback URL', async () => {
        const { projectId, key } = await server.createProject();
        const oldToken = newToken();
        const newer = newToken();
        await server.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: '111', providerAccessToken: oldToken, callbackUrl: 'https://127.0.0.1/hook' },
        });
        const before = await projectRow(server, projectId);
        await new Promise((resolve) => setTimeout(resolve, 5));
        const reply = await server.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: '222', providerAccessToken: newer },
        });
        assert.equal(reply.status, 200);
        assert.equal(reply.body.providerPhoneNumberId, '222');
        assert.equal(reply.body.callbackUrl, 'https://127.0.0.1/hook');
        const row = await projectRow(server, projectId);
        assert.equal(openSecret(KEY, row.provider_access_token_enc!), newer);
        assert.equal(row.provider_phone_number_id, '222');
        assert.ok(row.credentials_updated_at! > before.credentials_updated_at!);
        assert.equal(reply.body.updatedAt, new Date(row.updated_at).toISOString());
      });

      it('accepts the longest values and a public address without asking DNS', async () => {
        const { key } = await strict.createProject();
        const phone = '9'.repeat(128);
        const url = 'https://93.184.216.34/' + 'p'.repeat(2048 - 'https://93.184.216.34/'.length);
        const reply = await strict.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: phone, providerAccessToken: 'T'.repeat(4096), callbackUrl: url },
        });
        assert.equal(reply.status, 200, reply.text);
        assert.equal(reply.body.providerPhoneNumberId, phone);
        assert.equal(reply.body.callbackUrl, url);
        const ipv6 = await strict.call('PUT', PATH, { key, body: { callbackUrl: 'https://[2606:4700::1111]:8443/x' } });
        assert.equal(ipv6.status, 200, ipv6.text);
      });
    });

    describe('errors', () => {
      it('needs both credentials on the first call', async () => {
        const { projectId, key } = await server.createProject();
        const none = await server.call('PUT', PATH, { key, body: {} });
        assertValidation(none, '/providerPhoneNumberId', 'required');
        assertValidation(none, '/providerAccessToken', 'required');

        const phoneOnly = await server.call('PUT', PATH, { key, body: { providerPhoneNumberId: '111' } });
        assertValidation(phoneOnly, '/providerAccessToken', 'required');
        assert.equal(phoneOnly.body.errors.length, 1);

        const tokenOnly = await server.call('PUT', PATH, { key, body: { providerAccessToken: newToken() } });
        assertValidation(tokenOnly, '/providerPhoneNumberId', 'required');
        assert.equal(tokenOnly.body.errors.length, 1);

        const urlOnly = await server.call('PUT', PATH, { key, body: { callbackUrl: 'https://127.0.0.1/hook' } });
        assertValidation(urlOnly, '/providerPhoneNumberId', 'required');
        assertValidation(urlOnly, '/providerAccessToken', 'required');

        const wabaOnly = await server.call('PUT', PATH, { key, body: { providerBusinessAccountId: '102290129340398' } });
        assertValidation(wabaOnly, '/providerPhoneNumberId', 'required');
        assertValidation(wabaOnly, '/providerAccessToken', 'required');

        const row = await projectRow(server, projectId);
        assert.equal(row.provider_phone_number_id, null);
        assert.equal(row.provider_access_token_enc, null);
        assert.equal(row.callback_url, null);
      });

      it('needs both credentials together later too, and something to change', async () => {
        const { projectId, key } = await server.createProject();
        const token = newToken();
        await server.call('PUT', PATH, { key, body: { providerPhoneNumberId: '111', providerAccessToken: token } });

        const tokenOnly = await server.call('PUT', PATH, { key, body: { providerAccessToken: newToken() } });
        const error = assertValidation(tokenOnly, '/providerPhoneNumberId', 'required');
        assert.match(error.message, /together/);
        const phoneOnly = await server.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: '222', callbackUrl: 'https://127.0.0.1/hook' },
        });
        assertValidation(phoneOnly, '/providerAccessToken', 'required');
        assertValidation(await server.call('PUT', PATH, { key, body: {} }), '/', 'empty_update');

        const row = await projectRow(server, projectId);
        assert.equal(row.provider_phone_number_id, '111');
        assert.equal(openSecret(KEY, row.provider_access_token_enc!), token);
        assert.equal(row.callback_url, null);
      });

      it('refuses wrong types, unknown fields, empty, overlong and spaced values', async () => {
        const { key } = await server.createProject();
        const ok = { providerPhoneNumberId: '111', providerAccessToken: 'tok' };
        const cases: [unknown, string][] = [
          [{ ...ok, providerPhoneNumberId: 106540352242922 }, '/providerPhoneNumberId'],
          [{ ...ok, providerPhoneNumberId: ['111'] }, '/providerPhoneNumberId'],
          [{ ...ok, providerPhoneNumberId: '' }, '/providerPhoneNumberId'],
          [{ ...ok, providerPhoneNumberId: '9'.repeat(129) }, '/providerPhoneNumberId'],
          [{ ...ok, providerPhoneNumberId: '106 540' }, '/providerPhoneNumberId'],
          [{ ...ok, providerPhoneNumberId: null }, '/providerPhoneNumberId'],
          [{ ...ok, providerAccessToken: true }, '/providerAccessToken'],
          [{ ...ok, providerAccessToken: '' }, '/providerAccessToken'],
          [{ ...ok, providerAccessToken: 'T'.repeat(4097) }, '/providerAccessToken'],
          [{ ...ok, providerAccessToken: 'tok\nX-Injected: 1' }, '/providerAccessToken'],
          [{ ...ok, callbackUrl: 5 }, '/callbackUrl'],
          [{ ...ok, callbackUrl: {} }, '/callbackUrl'],
          [{ ...ok, callbackUrl: 'https://127.0.0.1/' + 'x'.repeat(2048) }, '/callbackUrl'],
          [{ ...ok, accessToken: 'tok' }, '/accessToken'],
          [{ ...ok, providerBusinessAccountId: '' }, '/providerBusinessAccountId'],
          [{ ...ok, providerBusinessAccountId: 'waba-1' }, '/providerBusinessAccountId'],
          [{ ...ok, providerBusinessAccountId: 102290129340398 }, '/providerBusinessAccountId'],
          [{ ...ok, providerBusinessAccountId: '1'.repeat(65) }, '/providerBusinessAccountId'],
          [{ ...ok, webhookSecret: 'whsec_x' }, '/webhookSecret'],
        ];
        for (const [body, field] of cases) {
          const reply = await server.call('PUT', PATH, { key, body });
          assertValidation(reply, field);
        }
        for (const raw of ['[]', '"x"', 'null', '42']) {
          const reply = await server.call('PUT', PATH, { key, raw, headers: { 'content-type': 'application/json' } });
          assert.equal(reply.status, 400, raw);
          assert.equal(reply.body.code, 'validation_failed');
        }
        const noBody = await server.call('PUT', PATH, { key });
        assert.equal(noBody.status, 400);
        const malformed = await server.call('PUT', PATH, {
          key,
          raw: '{"providerAccessToken": "tok',
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(malformed.status, 400);
        assert.equal(malformed.body.code, 'invalid_json');
        const form = await server.call('PUT', PATH, {
          key,
          raw: 'providerAccessToken=tok',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        assert.equal(form.status, 415);
        assert.equal((await server.call('GET', '/v1/projects/me', { key })).body.providerPhoneNumberId, undefined);
      });

      it('answers other methods with 405', async () => {
        const { key } = await server.createProject();
        const reply = await server.call('GET', PATH, { key });
        assert.equal(reply.status, 405);
        assert.equal(reply.headers.get('allow'), 'PUT');
      });

      it('refuses a callback URL of the wrong form, saying which rule', async () => {
        const { projectId, key } = await server.createProject();
        await server.call('PUT', PATH, { key, body: { providerPhoneNumberId: '111', providerAccessToken: 'tok' } });
        const cases: [string, string, RegExp][] = [
          ['', 'invalid_url', /absolute URL/],
          ['not a url', 'invalid_url', /absolute URL/],
          ['/relative/path', 'invalid_url', /absolute URL/],
          ['https:127.0.0.1/x', 'invalid_url', /absolute URL/],
          [' https://127.0.0.1/x', 'invalid_url', /absolute URL/],
          ['https://127.0.0.1/a b', 'invalid_url', /absolute URL/],
          ['https://127.0.0.1/a\tb', 'invalid_url', /absolute URL/],
          ['https://127.0.0.1\\@10.0.0.1/', 'invalid_url', /absolute URL/],
          ['ftp://127.0.0.1/x', 'https_required', /https or http/],
          ['javascript://127.0.0.1/%0Aalert(1)', 'https_required', /https or http/],
          ['https://user:secret@127.0.0.1/x', 'userinfo_not_allowed', /user name or password/],
          ['https://user@127.0.0.1/x', 'userinfo_not_allowed', /user name or password/],
          ['https://@127.0.0.1/x', 'userinfo_not_allowed', /user name or password/],
          ['https://127.0.0.1/x#top', 'fragment_not_allowed', /fragment/],
          ['https://127.0.0.1/x#', 'fragment_not_allowed', /fragment/],
        ];
        for (const [url, code, message] of cases) {
          const reply = await server.call('PUT', PATH, { key, body: { callbackUrl: url } });
          const error = assertValidation(reply, '/callbackUrl', code);
          assert.match(error.message, message, url);
          assert.equal(reply.body.errors.length, 1, url);
        }
        assert.equal((await projectRow(server, projectId)).callback_url, null);
      });

      it('reports every problem at once on a first call', async () => {
        const { key } = await server.createProject();
        const reply = await server.call('PUT', PATH, {
          key,
          body: { providerAccessToken: 'tok', callbackUrl: 'https://127.0.0.1/x#frag' },
        });
        assertValidation(reply, '/providerPhoneNumberId', 'required');
        assertValidation(reply, '/callbackUrl', 'fragment_not_allowed');
      });
    });

    describe('callback address guard (SVC_ALLOW_PRIVATE_CALLBACKS=false)', () => {
      it('refuses localhost after really resolving it', async () => {
        const { key } = await strict.createProject();
        const reply = await strict.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: '111', providerAccessToken: 'tok', callbackUrl: 'https://localhost/hook' },
        });
        const error = assertValidation(reply, '/callbackUrl', 'forbidden_address');
        assert.equal(error.message, 'callbackUrl must point to a public address, and localhost resolves to a loopback address.');
        assert.equal((await strict.call('GET', '/v1/projects/me', { key })).body.providerPhoneNumberId, undefined);
      });

      it('refuses private, loopback, link-local, metadata and reserved addresses in any spelling', async () => {
        const { projectId, key } = await strict.createProject();
        await strict.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: '111', providerAccessToken: 'tok', callbackUrl: 'https://93.184.216.34/hook' },
        });
        for (const url of [
          'https://127.0.0.1/hook',
          'https://[::1]/x',
          'https://10.0.0.1/x',
          'https://172.16.0.1/x',
          'https://192.168.1.1:8443/x',
          'https://169.254.169.254/latest/meta-data/',
          'https://100.64.0.1/x',
          'https://0.0.0.0/x',
          'https://[::ffff:127.0.0.1]/x',
          'https://[fd00:ec2::254]/x',
          'https://[fe80::1]/x',
          'https://2130706433/x',
          'https://0x7f.1/x',
          'https://127.1/x',
          'https://LOCALHOST:8443/x',
        ]) {
          const reply = await strict.call('PUT', PATH, { key, body: { callbackUrl: url } });
          assertValidation(reply, '/callbackUrl', 'forbidden_address');
        }
        assert.equal((await projectRow(strict, projectId)).callback_url, 'https://93.184.216.34/hook');
      });

      it('refuses http', async () => {
        const { key } = await strict.createProject();
        await strict.call('PUT', PATH, { key, body: { providerPhoneNumberId: '111', providerAccessToken: 'tok' } });
        const http = await strict.call('PUT', PATH, { key, body: { callbackUrl: 'http://example.com' } });
        const error = assertValidation(http, '/callbackUrl', 'https_required');
        assert.match(error.message, /must use https\./);
      });

      it('accepts a host that does not resolve (yet): every delivery checks it again', async () => {
        const { projectId, key } = await strict.createProject();
        const first = await strict.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: '111', providerAccessToken: 'tok', callbackUrl: 'https://example.com/hook' },
        });
        assert.equal(first.status, 200, first.text);
        assert.equal(first.body.callbackUrl, 'https://example.com/hook');
        assert.equal(first.body.id, projectId);
        // Resolvable or not here (this machine may have no outside DNS), none of them is refused.
        for (const url of ['https://hooks.acme.example/svc', 'https://no-such-host.invalid/x', 'https://example.com/hook']) {
          const reply = await strict.call('PUT', PATH, { key, body: { callbackUrl: url } });
          assert.equal(reply.status, 200, `${url}: ${reply.text}`);
          assert.equal(reply.body.callbackUrl, url);
          assert.equal((await projectRow(strict, projectId)).callback_url, url);
        }
        assert.equal((await strict.call('GET', '/v1/projects/me', { key })).body.callbackUrl, 'https://example.com/hook');
      });

      it('allows http and private addresses in development mode only', async () => {
        const { key } = await server.createProject();
        const reply = await server.call('PUT', PATH, {
          key,
          body: { providerPhoneNumberId: '111', providerAccessToken: 'tok', callbackUrl: 'http://127.0.0.1:9/hook' },
        });
        assert.equal(reply.status, 200, reply.text);
        assert.equal(reply.body.callbackUrl, 'http://127.0.0.1:9/hook');
        const local = await server.call('PUT', PATH, { key, body: { callbackUrl: 'http://localhost:8080/hook' } });
        assert.equal(local.status, 200, local.text);
        // DNS is not asked at all in development mode: an unresolvable name is saved as it is.
        const unknown = await server.call('PUT', PATH, { key, body: { callbackUrl: 'https://nothing-here.invalid/hook' } });
        assert.equal(unknown.status, 200, unknown.text);
        assert.equal(unknown.body.callbackUrl, 'https://nothing-here.invalid/hook');
      });
    });

    describe('security', () => {
      it('never shows the token in a response, a log line or a stored row', async () => {
        const { projectId, key } = await server.createProject();
        const token = newToken();
        const replies = [
          await server.call('PUT', PATH, {
            key,
            body: { providerPhoneNumberId: '111', providerAccessToken: token, callbackUrl: 'https://127.0.0.1/h' },
          }),
          await server.call('PUT', PATH, {
            key,
            body: { providerPhoneNumberId: '111', providerAccessToken: token, callbackUrl: 'https://127.0.0.1/#x' },
          }),
          await server.call('PUT', PATH, { key, body: { providerAccessToken: token } }),
          await server.call('PUT', PATH, { key, body: { providerPhoneNumberId: '1 1', providerAccessToken: token } }),
          await server.call('PUT', PATH, { key, body: { providerPhoneNumberId: '111', providerAccessToken: token + ' ' } }),
          await server.call('GET', '/v1/projects/me', { key }),
          await server.call('GET', '/v1/projects/me/webhook-secret', { key }),
        ];
        assert.deepEqual(
          replies.map((reply) => reply.status),
          [200, 400, 400, 400, 400, 200, 200],
        );
        for (const reply of replies) {
          assert.ok(!reply.text.includes(token), reply.text);
          assert.ok(![...reply.headers.values()].some((value) => value.includes(token)));
        }

        const logs = logLines.join('');
        assert.match(logs, /provider-credentials/, 'the requests were logged');
        assert.ok(!logs.includes(token), 'the token is in a log line');

        const row = await projectRow(server, projectId);
        assert.ok(!JSON.stringify(row).includes(token));
        assert.match(row.provider_access_token_enc!, /^v1\./);
        assert.equal(openSecret(KEY, row.provider_access_token_enc!), token);
        if (kind === 'sqlite') {
          // The database file, its write-ahead log and anything else beside it.
          for (const file of readdirSync(server.database.place)) {
            const bytes = readFileSync(join(server.database.place, file));
            assert.equal(bytes.indexOf(token), -1, `${file} holds the token in clear`);
          }
        }
      });

      it('describes the token as write-only in OpenAPI and never in a response schema', async () => {
        const doc = (await server.call('GET', '/openapi.json')).body;
        const put = doc.paths[PATH].put;
        const body = put.requestBody.content['application/json'].schema;
        assert.equal(body.properties.providerAccessToken.writeOnly, true);
        assert.ok(!JSON.stringify(put.responses).includes('providerAccessToken'));
      });

      it("changes only the calling key's project", async () => {
        const alice = await server.createProject('alice');
        const bob = await server.createProject('bob');
        const bobToken = newToken();
        await server.call('PUT', PATH, {
          key: bob.key,
          body: { providerPhoneNumberId: '222', providerAccessToken: bobToken, callbackUrl: 'https://127.0.0.1/bob' },
        });
        const reply = await server.call('PUT', PATH, {
          key: alice.key,
          body: { providerPhoneNumberId: '111', providerAccessToken: newToken(), callbackUrl: 'https://127.0.0.1/alice' },
        });
        assert.equal(reply.body.projectId, alice.projectId);
        const bobRow = await projectRow(server, bob.projectId);
        assert.equal(bobRow.provider_phone_number_id, '222');
        assert.equal(bobRow.callback_url, 'https://127.0.0.1/bob');
        assert.equal(openSecret(KEY, bobRow.provider_access_token_enc!), bobToken);
        const bobMe = await server.call('GET', '/v1/projects/me', { key: bob.key });
        assert.equal(bobMe.body.callbackUrl, 'https://127.0.0.1/bob');
      });

      it('is 401 for missing, forged and revoked keys, before reading the body', async () => {
        const { projectId, key } = await server.createProject();
        const spare = (await server.call('POST', '/v1/api-keys', { key, body: { name: 'spare' } })).body;
        assert.equal((await server.call('DELETE', `/v1/api-keys/${spare.id}`, { key })).status, 200);
        const body = { providerPhoneNumberId: '111', providerAccessToken: 'tok', callbackUrl: 'https://127.0.0.1/x' };
        for (const credential of [undefined, 'svc_live_' + 'z'.repeat(40), spare.key]) {
          const reply = await server.call('PUT', PATH, { key: credential, body });
          assert.equal(reply.status, 401);
          assert.equal(reply.body.code, 'unauthorized');
        }
        const malformed = await server.call('PUT', PATH, { raw: '{', headers: { 'content-type': 'application/json' } });
        assert.equal(malformed.status, 401);
        const row = await projectRow(server, projectId);
        assert.equal(row.provider_access_token_enc, null);
        assert.equal(row.callback_url, null);
      });

      it('refuses a save that commits after its key was revoked mid-flight', async () => {
        const gate = writeGate(PATH);
        const paused = await startTestServer(kind, {
          database: server.database,
          testHooks: gate.hooks,
        });
        try {
          const { projectId, key, keyId } = await paused.createProject();
          const admin = (await paused.call('POST', '/v1/api-keys', { key, body: { name: 'admin' } })).body;
          gate.arm();
          const inFlight = paused.call('PUT', PATH, {
            key,
            body: { providerPhoneNumberId: '111', providerAccessToken: 'tok' },
          });
          await gate.atWrite;
          assert.equal((await paused.call('DELETE', `/v1/api-keys/${keyId}`, { key: admin.key })).status, 200);
          gate.release();
          const late = await inFlight;
          assert.equal(late.status, 401);
          assert.equal((await projectRow(paused, projectId)).provider_access_token_enc, null);
        } finally {
          await paused.app.stop();
        }
      });
    });
  });
}
