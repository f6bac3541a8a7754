import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { openSecret } from '../../src/domain/secretBox.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from '../support/server.ts';

const GET_PATH = '/v1/projects/me/webhook-secret';
const ROTATE_PATH = '/v1/projects/me/webhook-secret/rotate';
const KEY = Buffer.from(TEST_ENCRYPTION_KEY, 'base64');
const DAY_MS = 24 * 60 * 60 * 1000;
const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

function projectRow(server: TestServer, projectId: string) {
  return server.app.database.db
    .selectFrom('projects')
    .selectAll()
    .where('id', '=', projectId)
    .executeTakeFirstOrThrow();
}

for (const kind of databaseKinds()) {
  describe(`webhook secret (${kind})`, () => {
    const logLines: string[] = [];
    let server: TestServer;
    before(async () => {
      const logger = pino({ level: 'trace' }, { write: (line: string) => logLines.push(line) });
      server = await startTestServer(kind, { logger });
    });
    after(() => server.close());

    describe('happy path', () => {
      it('gives each project its own secret at creation, stable until rotated', async () => {
        const alice = await server.createProject('alice');
        const bob = await server.createProject('bob');
        const reply = await server.call('GET', GET_PATH, { key: alice.key });
        assert.equal(reply.status, 200);
        assert.deepEqual(Object.keys(reply.body).sort(), ['secret', 'secrets']);
        assert.match(reply.body.secret, SECRET);
        assert.ok(Buffer.from(reply.body.secret.slice('whsec_'.length), 'base64').length >= 24);
        assert.deepEqual(reply.body.secrets, [reply.body.secret]);
        assert.equal(reply.headers.get('cache-control'), 'no-store');

        const again = await server.call('GET', GET_PATH, { key: alice.key });
        assert.equal(again.body.secret, reply.body.secret);
        const other = await server.call('GET', GET_PATH, { key: bob.key });
        assert.notEqual(other.body.secret, reply.body.secret);
      });

      it('rotates: the new secret first, the previous one beside it for 24 h', async () => {
        const { key } = await server.createProject();
        const original = (await server.call('GET', GET_PATH, { key })).body.secret;
        const startedAt = Date.now();
        const rotated = await server.call('POST', ROTATE_PATH, { key });
        assert.equal(rotated.status, 200);
        assert.equal(rotated.headers.get('cache-control'), 'no-store');
        assert.deepEqual(Object.keys(rotated.body).sort(), ['previousSecretExpiresAt', 'secret', 'secrets']);
        assert.match(rotated.body.secret, SECRET);
        assert.notEqual(rotated.body.secret, original);
        assert.deepEqual(rotated.body.secrets, [rotated.body.secret, original]);
        const expiresAt = Date.parse(rotated.body.previousSecretExpiresAt);
        assert.ok(expiresAt >= startedAt + DAY_MS && expiresAt <= Date.now() + DAY_MS, rotated.body.previousSecretExpiresAt);

        const read = await server.call('GET', GET_PATH, { key });
        assert.deepEqual(read.body, rotated.body);
      });

      it('takes no body, an empty body with a JSON type, or {}', async () => {
        const { key } = await server.createProject();
        const seen = new Set<string>();
        for (const options of [
          {},
          { raw: '', headers: { 'content-type': 'application/json' } },
          { body: {} },
          { raw: ' {} ', headers: { 'content-type': 'application/json; charset=utf-8' } },
        ]) {
          const reply = await server.call('POST', ROTATE_PATH, { key, ...options });
          assert.equal(reply.status, 200, `${JSON.stringify(options)}: ${reply.text}`);
          seen.add(reply.body.secret);
        }
        assert.equal(seen.size, 4);
      });

      it('keeps only the latest previous secret after two rotations', async () => {
        const { key } = await server.createProject();
        const original = (await server.call('GET', GET_PATH, { key })).body.secret;
        const first = (await server.call('POST', ROTATE_PATH, { key })).body;
        const second = (await server.call('POST', ROTATE_PATH, { key })).body;
        assert.deepEqual(second.secrets, [second.secret, first.secret]);
        const read = await server.call('GET', GET_PATH, { key });
        assert.deepEqual(read.body.secrets, [second.secret, first.secret]);
        assert.ok(!read.text.includes(original));
      });

      it('stops returning the previous secret once its 24 h are over', async () => {
        const { projectId, key } = await server.createProject();
        const rotated = (await server.call('POST', ROTATE_PATH, { key })).body;
        await server.app.database.db
          .updateTable('projects')
          .set({ previous_webhook_secret_expires_at: Date.now() - 1 })
          .where('id', '=', projectId)
          .execute();
        const read = await server.call('GET', GET_PATH, { key });
        assert.deepEqual(read.body, { secret: rotated.secret, secrets: [rotated.secret] });
      });

      it('loses no secret to concurrent rotations', async () => {
        const { key } = await server.createProject();
        const original = (await server.call('GET', GET_PATH, { key })).body.secret;
        const replies = await Promise.all(
          Array.from({ length: 6 }, () => server.call('POST', ROTATE_PATH, { key })),
        );
        assert.deepEqual(
          replies.map((reply) => reply.status),
          [200, 200, 200, 200, 200, 200],
        );
        // Each rotation demoted whatever was current when it ran: the answers form one chain.
        const previousOf = new Map(replies.map((reply) => [reply.body.secret, reply.body.secrets[1]]));
        const demoted = [...previousOf.values()];
        assert.equal(new Set(demoted).size, 6, 'each secret was demoted once');
        assert.ok(demoted.includes(original));
        const current = (await server.call('GET', GET_PATH, { key })).body;
        assert.ok(previousOf.has(current.secret));
        assert.equal(current.secrets[1], previousOf.get(current.secret));
        assert.ok(!demoted.includes(current.secret), 'the current secret is the last one made');
      });
    });

    describe('errors', () => {
      it('refuses a body with anything in it', async () => {
        const { projectId, key } = await server.createProject();
        const before = (await projectRow(server, projectId)).webhook_secret_enc;
        const unknown = await server.call('POST', ROTATE_PATH, { key, body: { secret: 'whsec_mine', a: 1 } });
        assert.equal(unknown.status, 400);
        assert.equal(unknown.body.code, 'validation_failed');
        assert.deepEqual(
          unknown.body.errors.map((error: any) => [error.field, error.code]),
          [
            ['/secret', 'unknown_field'],
            ['/a', 'unknown_field'],
          ],
        );
        for (const raw of ['[]', 'null', '"x"', '1']) {
          const reply = await server.call('POST', ROTATE_PATH, {
            key,
            raw,
            headers: { 'content-type': 'application/json' },
          });
          assert.equal(reply.status, 400, raw);
          assert.equal(reply.body.code, 'validation_failed');
        }
        const malformed = await server.call('POST', ROTATE_PATH, {
          key,
          raw: '{',
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(malformed.status, 400);
        assert.equal(malformed.body.code, 'invalid_json');
        const text = await server.call('POST', ROTATE_PATH, { key, raw: 'x', headers: { 'content-type': 'text/plain' } });
        assert.equal(text.status, 415);
        assert.equal((await projectRow(server, projectId)).webhook_secret_enc, before, 'nothing rotated');
      });

      it('answers other methods with 405', async () => {
        const { key } = await server.createProject();
        const getRotate = await server.call('GET', ROTATE_PATH, { key });
        assert.equal(getRotate.status, 405);
        assert.equal(getRotate.headers.get('allow'), 'POST');
        const putSecret = await server.call('PUT', GET_PATH, { key, body: { secret: 'whsec_x' } });
        assert.equal(putSecret.status, 405);
        assert.equal(putSecret.headers.get('allow'), 'GET');
      });
    });

    describe('security', () => {
      it('stores secrets sealed and never shows them in the project or a log line', async () => {
        const { projectId, key } = await server.createProject();
        const original = (await server.call('GET', GET_PATH, { key })).body.secret;
        const rotated = (await server.call('POST', ROTATE_PATH, { key })).body.secret;
        const row = await projectRow(server, projectId);
        const stored = JSON.stringify(row);
        for (const secret of [original, rotated]) {
          assert.ok(!stored.includes(secret));
          assert.ok(!stored.includes(secret.slice('whsec_'.length)));
        }
        assert.equal(openSecret(KEY, row.webhook_secret_enc), rotated);
        assert.equal(openSecret(KEY, row.previous_webhook_secret_enc!), original);

        const me = await server.call('GET', '/v1/projects/me', { key });
        assert.ok(!me.text.includes(original) && !me.text.includes(rotated));
        assert.ok(!/whsec_/.test(me.text));

        const logs = logLines.join('');
        assert.match(logs, /webhook-secret/, 'the requests were logged');
        assert.ok(!logs.includes(original) && !logs.includes(rotated), 'a secret is in a log line');
      });

      it("reads and rotates only the calling key's project", async () => {
        const alice = await server.createProject('alice');
        const bob = await server.createProject('bob');
        const bobBefore = (await server.call('GET', GET_PATH, { key: bob.key })).body;
        const aliceRotated = (await server.call('POST', ROTATE_PATH, { key: alice.key })).body;
        assert.ok(!aliceRotated.secrets.includes(bobBefore.secret));
        const bobAfter = (await server.call('GET', GET_PATH, { key: bob.key })).body;
        assert.deepEqual(bobAfter, bobBefore);
        const bobRow = await projectRow(server, bob.projectId);
        assert.equal(bobRow.previous_webhook_secret_enc, null);
      });

      it('is 401 for missing, forged and revoked keys, and a refused rotation changes nothing', async () => {
        const { projectId, key } = await server.createProject();
        const spare = (await server.call('POST', '/v1/api-keys', { key, body: { name: 'spare' } })).body;
        assert.equal((await server.call('DELETE', `/v1/api-keys/${spare.id}`, { key })).status, 200);
        const before = (await projectRow(server, projectId)).webhook_secret_enc;
        for (const [method, path] of [
          ['GET', GET_PATH],
          ['POST', ROTATE_PATH],
        ] as const) {
          for (const credential of [undefined, 'svc_live_' + 'z'.repeat(40), spare.key]) {
            const reply = await server.call(method, path, { key: credential });
            assert.equal(reply.status, 401, `${method} ${path} ${credential}`);
            assert.equal(reply.body.code, 'unauthorized');
            assert.ok(!/whsec_/.test(reply.text));
          }
        }
        assert.equal((await projectRow(server, projectId)).webhook_secret_enc, before);
      });
    });
  });
}
