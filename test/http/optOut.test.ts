import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// GET/PUT /v1/projects/me/opt-out (CONTRACT §9): defaults, replacement of the list, validation,
// and each project's settings its own.

const PATH = '/v1/projects/me/opt-out';
const DEFAULTS = ['STOP', 'UNSUBSCRIBE', 'PARAR', 'SAIR', 'BAJA', 'ARRET'];

for (const kind of databaseKinds()) {
  describe(`opt-out settings (${kind})`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(kind);
    });
    after(() => server.close());

    it('starts enabled with the default keywords; PUT replaces the list, and each field alone', async () => {
      const { key } = await server.createProject();
      const initial = await server.call('GET', PATH, { key });
      assert.equal(initial.status, 200, initial.text);
      assert.deepEqual(initial.body, { keywords: DEFAULTS, enabled: true });

      const replaced = await server.call('PUT', PATH, { key, body: { keywords: ['  Cancelar ', 'Não quero', 'STOP'], enabled: true } });
      assert.equal(replaced.status, 200, replaced.text);
      assert.deepEqual(replaced.body, { keywords: ['Cancelar', 'Não quero', 'STOP'], enabled: true });
      assert.deepEqual((await server.call('GET', PATH, { key })).body, replaced.body);

      const off = await server.call('PUT', PATH, { key, body: { enabled: false } });
      assert.deepEqual(off.body, { keywords: ['Cancelar', 'Não quero', 'STOP'], enabled: false });
      const emptied = await server.call('PUT', PATH, { key, body: { keywords: [] } });
      assert.deepEqual(emptied.body, { keywords: [], enabled: false });
      assert.deepEqual((await server.call('GET', PATH, { key })).body, { keywords: [], enabled: false });
    });

    it('refuses bad keyword lists with 400 validation_failed naming the keyword, changing nothing', async () => {
      const { key } = await server.createProject();
      const cases: [unknown, string | undefined][] = [
        [{ keywords: ['STOP', 'stop'] }, '/keywords/1'],
        [{ keywords: ['ok', '   '] }, '/keywords/1'],
        [{ keywords: ['bad\u0000byte'] }, '/keywords/0'],
        [{ keywords: ['zero\u200bwidth'] }, '/keywords/0'],
        [{ keywords: ['line\nbreak'] }, '/keywords/0'],
        [{ keywords: ['x'.repeat(65)] }, '/keywords/0'],
        [{ keywords: ['x'.repeat(200)] }, undefined],
        [{ keywords: Array.from({ length: 51 }, (_, i) => `word${i}`) }, undefined],
        [{ keywords: 'STOP' }, undefined],
        [{ keywords: [1, 2] }, undefined],
        [{ enabled: 'yes' }, undefined],
        [{}, undefined],
        [{ keywords: ['STOP'], admin: true }, undefined],
        [{ keywords: ["'; drop table suppressions; --"] }, 'accepted'],
      ];
      for (const [body, field] of cases) {
        const reply = await server.call('PUT', PATH, { key, body });
        if (field === 'accepted') {
          // Stored as text like any other keyword; the project and its tables are intact.
          assert.equal(reply.status, 200, reply.text);
          assert.deepEqual(reply.body.keywords, ["'; drop table suppressions; --"]);
          continue;
        }
        assert.equal(reply.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${reply.text}`);
        assert.equal(reply.body.code, 'validation_failed');
        if (field !== undefined) assert.equal(reply.body.errors[0].field, field, reply.text);
      }
      assert.equal((await server.call('GET', '/v1/suppressions', { key })).status, 200);
      const invalidJson = await server.call('PUT', PATH, { key, raw: '{"keywords": [', headers: { 'content-type': 'application/json' } });
      assert.equal(invalidJson.status, 400);
      assert.equal(invalidJson.body.code, 'invalid_json');
    });

    it('keeps each project’s settings its own, and refuses a missing or revoked key', async () => {
      const one = await server.createProject();
      const two = await server.createProject();
      assert.equal((await server.call('PUT', PATH, { key: one.key, body: { keywords: ['BASTA'], enabled: false } })).status, 200);
      assert.deepEqual((await server.call('GET', PATH, { key: two.key })).body, { keywords: DEFAULTS, enabled: true });

      assert.equal((await server.call('GET', PATH)).status, 401);
      assert.equal((await server.call('PUT', PATH, { body: { enabled: false } })).status, 401);
      const second = await server.call('POST', '/v1/api-keys', { key: two.key, body: { name: 'second' } });
      assert.equal((await server.call('DELETE', `/v1/api-keys/${second.body.id}`, { key: two.key })).status, 200);
      const revoked = await server.call('PUT', PATH, { key: second.body.key, body: { enabled: false } });
      assert.equal(revoked.status, 401);
      assert.equal((await server.call('GET', PATH, { key: second.body.key })).status, 401);
      assert.deepEqual((await server.call('GET', PATH, { key: two.key })).body, { keywords: DEFAULTS, enabled: true });
    });
  });
}
