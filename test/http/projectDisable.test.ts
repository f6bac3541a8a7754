import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { runSvc } from '../support/process.ts';
import { sendBody, senderAt } from '../support/sending.ts';
import { startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from '../support/server.ts';
import { writeGate } from '../support/writeGate.ts';

// Issue #10, point 12: `svc projects disable|enable ID`, the operator's switch.

const DISABLED = 'This project is disabled; contact the operator.';

for (const kind of databaseKinds()) {
  describe(`svc projects disable|enable (${kind})`, () => {
    let server: TestServer;
    let second: TestServer;
    const svc = (...args: string[]) =>
      runSvc(['projects', ...args], { SVC_DATABASE_URL: server.database.url, SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
    before(async () => {
      server = await startTestServer(kind);
      // Another API process on the same database: the switch must reach it too, without a restart.
      second = await startTestServer(kind, { database: server.database });
    });
    after(async () => {
      await second.app.stop();
      await server.close();
    });

    it('makes every key of the project 401 at once, in every process, and enable gives them back', async () => {
      const alice = await senderAt(server.url);
      const spare = (await server.call('POST', '/v1/api-keys', { key: alice.key, body: { name: 'spare' } })).body;
      const bob = await server.createProject('bob');

      const disabled = await svc('disable', alice.projectId);
      assert.equal(disabled.code, 0, disabled.output);
      assert.match(disabled.output, new RegExp(`project ${alice.projectId} disabled`));

      for (const target of [server, second]) {
        for (const key of [alice.key, spare.key]) {
          for (const [method, path, body] of [
            ['GET', '/v1/projects/me'],
            ['GET', '/v1/messages'],
            ['POST', '/v1/messages', sendBody(alice)],
            ['POST', '/v1/api-keys', { name: 'sneaky' }],
            ['DELETE', '/v1/projects/me'],
          ] as [string, string, unknown?][]) {
            const reply = await target.call(method, path, { key, body });
            assert.equal(reply.status, 401, `${method} ${path}`);
            assert.equal(reply.body.code, 'unauthorized');
            assert.equal(reply.body.detail, DISABLED);
            assert.equal(reply.headers.get('www-authenticate'), 'Bearer');
          }
        }
      }
      assert.equal((await second.call('GET', '/v1/projects/me', { key: bob.key })).status, 200);

      const enabled = await svc('enable', alice.projectId);
      assert.equal(enabled.code, 0, enabled.output);
      assert.match(enabled.output, /enabled/);
      for (const target of [server, second]) {
        assert.equal((await target.call('GET', '/v1/projects/me', { key: alice.key })).status, 200);
        assert.equal((await target.call('GET', '/v1/projects/me', { key: spare.key })).status, 200);
      }
      const keys = await server.call('GET', '/v1/api-keys', { key: alice.key });
      assert.deepEqual(keys.body.map((key: any) => key.name).sort(), ['default', 'spare']);
      assert.equal((await server.call('POST', '/v1/messages', { key: alice.key, body: sendBody(alice) })).status, 202);
    });

    it('refuses a write of the project that was in flight when it was disabled', async () => {
      for (const route of ['/v1/templates', '/v1/messages', '/v1/api-keys']) {
        const gate = writeGate(route);
        const paused = await startTestServer(kind, { database: server.database, testHooks: gate.hooks });
        try {
          const alice = await senderAt(paused.url);
          const bodies: Record<string, unknown> = {
            '/v1/templates': { name: 'late', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi {{1}}.' }] },
            '/v1/messages': sendBody(alice),
            '/v1/api-keys': { name: 'late' },
          };
          gate.arm();
          const inFlight = paused.call('POST', route, { key: alice.key, body: bodies[route] });
          await gate.atWrite;
          assert.equal((await svc('disable', alice.projectId)).code, 0);
          gate.release();
          const late = await inFlight;
          assert.equal(late.status, 401, `${route}: ${late.text}`);
          assert.equal((await svc('enable', alice.projectId)).code, 0);
          const listed = await paused.call('GET', route === '/v1/api-keys' ? route : `${route}?limit=200`, { key: alice.key });
          assert.equal(listed.status, 200);
          assert.ok(!listed.text.includes('"late"'), route);
          if (route === '/v1/messages') assert.deepEqual(listed.body, []);
        } finally {
          await paused.app.stop();
        }
      }
    });

    it('names an unknown project and changes nothing', async () => {
      const { key } = await server.createProject();
      const result = await svc('disable', 'proj_00000000000000000000000000');
      assert.equal(result.code, 1);
      assert.match(result.output, /no project has the id "proj_00000000000000000000000000"/);
      assert.equal((await server.call('GET', '/v1/projects/me', { key })).status, 200);
    });
  });
}
