import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { writeGate } from '../support/writeGate.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

for (const kind of databaseKinds()) {
  describe(`API keys (${kind})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind);
    });
    after(() => server.close());

    describe('happy path', () => {
      it('creates a key that works at once and is listed without its value', async () => {
        const { key, keyId } = await server.createProject();
        const created = await server.call('POST', '/v1/api-keys', { key, body: { name: 'production' } });
        assert.equal(created.status, 200);
        assert.match(created.body.id, /^key_/);
        assert.equal(created.body.name, 'production');
        assert.match(created.body.key, /^svc_live_[0-9A-Za-z]{32,}$/);
        assert.equal(created.body.apiKey, created.body.key);
        assert.equal(created.body.prefix, created.body.key.slice(0, 12));
        assert.equal(created.body.lastUsedAt, null);

        const me = await server.call('GET', '/v1/projects/me', { key: created.body.key });
        assert.equal(me.status, 200);

        const list = await server.call('GET', '/v1/api-keys', { key });
        assert.equal(list.status, 200);
        assert.deepEqual(list.body.map((item: any) => item.id).sort(), [keyId, created.body.id].sort());
        for (const item of list.body) {
          assert.deepEqual(Object.keys(item).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'prefix']);
        }
        assert.ok(!list.text.includes(created.body.key));
        assert.ok(!list.text.includes(key));
      });

      it('revokes a key at once and returns the record with revokedAt', async () => {
        const { key } = await server.createProject();
        const second = (await server.call('POST', '/v1/api-keys', { key, body: { name: 'ci' } })).body;
        const revoked = await server.call('DELETE', `/v1/api-keys/${second.id}`, { key });
        assert.equal(revoked.status, 200);
        assert.equal(revoked.body.id, second.id);
        assert.equal(revoked.body.name, 'ci');
        assert.match(revoked.body.revokedAt, /Z$/);
        assert.ok(!('key' in revoked.body));

        const refused = await server.call('GET', '/v1/projects/me', { key: second.key });
        assert.equal(refused.status, 401);
        const list = await server.call('GET', '/v1/api-keys', { key });
        assert.ok(!list.body.some((item: any) => item.id === second.id));
        const again = await server.call('DELETE', `/v1/api-keys/${second.id}`, { key });
        assert.equal(again.status, 404);
      });

      it('lets a key revoke itself when another remains', async () => {
        const { key, keyId } = await server.createProject();
        const other = (await server.call('POST', '/v1/api-keys', { key, body: { name: 'other' } })).body;
        assert.equal((await server.call('DELETE', `/v1/api-keys/${keyId}`, { key })).status, 200);
        assert.equal((await server.call('GET', '/v1/api-keys', { key })).status, 401);
        assert.equal((await server.call('GET', '/v1/api-keys', { key: other.key })).status, 200);
      });

      it('records lastUsedAt shortly after use', async () => {
        const { key, keyId } = await server.createProject();
        await server.call('GET', '/v1/projects/me', { key });
        let lastUsedAt: string | null = null;
        for (let i = 0; i < 40 && lastUsedAt === null; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          const list = await server.call('GET', '/v1/api-keys', { key });
          lastUsedAt = list.body.find((item: any) => item.id === keyId).lastUsedAt;
        }
        assert.match(lastUsedAt ?? '', /Z$/);
      });
    });

    describe('errors', () => {
      it('validates the name', async () => {
        const { key } = await server.createProject();
        for (const body of [
          {},
          { name: '' },
          { name: 'x'.repeat(101) },
          { name: 5 },
          { name: 'ok', scope: 'all' },
        ]) {
          const reply = await server.call('POST', '/v1/api-keys', { key, body });
          assert.equal(reply.status, 400, JSON.stringify(body));
          assert.equal(reply.body.code, 'validation_failed');
        }
      });

      it('refuses to revoke the last active key with 409', async () => {
        const { key, keyId } = await server.createProject();
        const reply = await server.call('DELETE', `/v1/api-keys/${keyId}`, { key });
        assert.equal(reply.status, 409);
        assert.equal(reply.body.code, 'last_active_key');
        assert.equal((await server.call('GET', '/v1/projects/me', { key })).status, 200);
      });

      it('is 404 for an unknown id or a key value', async () => {
        const { key } = await server.createProject();
        await server.call('POST', '/v1/api-keys', { key, body: { name: 'spare' } });
        for (const id of ['key_00000000000000000000000000', key, 'x'.repeat(150), '%27%20or%201%3D1']) {
          const reply = await server.call('DELETE', `/v1/api-keys/${id}`, { key });
          assert.equal(reply.status, 404, id);
          assert.equal(reply.body.code, 'not_found');
        }
      });
    });

    describe('security', () => {
      it("never reveals or revokes another project's keys", async () => {
        const alice = await server.createProject('alice');
        const bob = await server.createProject('bob');
        await server.call('POST', '/v1/api-keys', { key: bob.key, body: { name: 'spare' } });
        const reply = await server.call('DELETE', `/v1/api-keys/${bob.keyId}`, { key: alice.key });
        assert.equal(reply.status, 404);
        assert.equal((await server.call('GET', '/v1/projects/me', { key: bob.key })).status, 200);
        const list = await server.call('GET', '/v1/api-keys', { key: alice.key });
        assert.deepEqual(
          list.body.map((item: any) => item.id),
          [alice.keyId],
        );
      });

      it('is 401 on every route for missing, forged and revoked keys', async () => {
        const { key } = await server.createProject();
        const spare = (await server.call('POST', '/v1/api-keys', { key, body: { name: 'spare' } })).body;
        await server.call('DELETE', `/v1/api-keys/${spare.id}`, { key });
        const routes: [string, string, unknown?][] = [
          ['GET', '/v1/api-keys'],
          ['POST', '/v1/api-keys', { name: 'x' }],
          ['DELETE', `/v1/api-keys/${spare.id}`],
          ['GET', '/v1/projects/me'],
        ];
        for (const [method, path, body] of routes) {
          for (const credential of [undefined, 'svc_live_' + 'z'.repeat(40), spare.key]) {
            const reply = await server.call(method, path, { key: credential, body });
            assert.equal(reply.status, 401, `${method} ${path} with ${credential}`);
            assert.equal(reply.body.code, 'unauthorized');
          }
        }
      });

      it('concurrent cross-revocations neither deadlock nor leave the project keyless', async () => {
        for (let round = 0; round < 10; round++) {
          const { key } = await server.createProject();
          const a = (await server.call('POST', '/v1/api-keys', { key, body: { name: 'a' } })).body;
          const b = (await server.call('POST', '/v1/api-keys', { key, body: { name: 'b' } })).body;
          const [aRevokesB, bRevokesA] = await Promise.all([
            server.call('DELETE', `/v1/api-keys/${b.id}`, { key: a.key }),
            server.call('DELETE', `/v1/api-keys/${a.id}`, { key: b.key }),
          ]);
          const statuses = [aRevokesB.status, bRevokesA.status].sort();
          // Either both commit (each key was still active when its request locked the keys) or the
          // second sees its own key revoked: never a 500.
          assert.ok(
            JSON.stringify(statuses) === '[200,200]' || JSON.stringify(statuses) === '[200,401]',
            JSON.stringify(statuses),
          );
          const left = await server.call('GET', '/v1/api-keys', { key });
          assert.equal(left.status, 200);
          assert.ok(left.body.length >= 1);
        }
      });

      it('answers 401 before looking at the body', async () => {
        const reply = await server.call('POST', '/v1/api-keys', {
          raw: '{not json',
          headers: { 'content-type': 'application/json' },
        });
        assert.equal(reply.status, 401);
      });

      it('refuses a write that commits after its key was revoked mid-flight', async () => {
        const gate = writeGate('/v1/api-keys');
        const paused = await startTestServer(kind, {
          database: server.database,
          testHooks: gate.hooks,
        });
        try {
          const { key, keyId } = await paused.createProject();
          const admin = await paused.call('POST', '/v1/api-keys', { key, body: { name: 'admin' } });
          assert.equal(admin.status, 200);
          gate.arm();
          const inFlight = paused.call('POST', '/v1/api-keys', { key, body: { name: 'sneaky' } });
          await gate.atWrite;
          const revoke = await paused.call('DELETE', `/v1/api-keys/${keyId}`, { key: admin.body.key });
          assert.equal(revoke.status, 200);
          gate.release();
          const late = await inFlight;
          assert.equal(late.status, 401);
          assert.equal(late.body.code, 'unauthorized');
          const list = await paused.call('GET', '/v1/api-keys', { key: admin.body.key });
          assert.deepEqual(
            list.body.map((item: any) => item.name),
            ['admin'],
          );
        } finally {
          await paused.app.stop();
        }
      });
    });
  });
}
