import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import type { Reply } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Reads on the request path go to the read connection (database.reader): with SQLite a second
// connection that WAL lets read while the writer is inside a transaction, so a GET never waits
// behind a worker's batch. Were they on the writer, these GETs would wait for the transaction
// below, which waits for them: the test would time out instead of passing.

const WAIT_MS = 5_000;

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} waited more than ${ms} ms behind an open write transaction`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

for (const kind of databaseKinds()) {
  describe(`reads on the request path (${kind})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind, { env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' } });
    });
    after(() => server.close());

    it('answer GET /v1/projects/me, /v1/templates, /v1/templates/{id} and the webhook secret while a write transaction is open', async () => {
      const { projectId, key } = await server.createProject('readable');
      const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', {
        key,
        body: { providerPhoneNumberId: '111', providerAccessToken: 'tok' },
      });
      assert.equal(saved.status, 200, saved.text);
      const created = await server.call('POST', '/v1/templates', {
        key,
        body: { name: 'held', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi {{1}}.' }] },
      });
      assert.equal(created.status, 200, created.text);
      const secret = (await server.call('GET', '/v1/projects/me/webhook-secret', { key })).body.secret;

      await server.app.database.db.transaction().execute(async (trx) => {
        // The writer holds its transaction (and, with SQLite, the write lock) with an uncommitted change.
        await trx.updateTable('projects').set({ name: 'uncommitted' }).where('id', '=', projectId).execute();
        const paths = ['/v1/projects/me', '/v1/templates', `/v1/templates/${created.body.id}`, '/v1/projects/me/webhook-secret'];
        const replies: Reply[] = await within(
          Promise.all(paths.map((path) => server.call('GET', path, { key }))),
          WAIT_MS,
          'a GET',
        );
        for (const [index, reply] of replies.entries()) assert.equal(reply.status, 200, `${paths[index]}: ${reply.text}`);
        const [me, list, one, webhookSecret] = replies as [Reply, Reply, Reply, Reply];
        assert.equal(me.body.name, 'readable', 'a read sees committed data only');
        assert.equal(me.body.id, projectId);
        assert.deepEqual(list.body, [created.body]);
        assert.deepEqual(one.body, created.body);
        assert.equal(webhookSecret.body.secret, secret);
        // Roll the change back.
        throw new RolledBack();
      }).catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      });
      assert.equal((await server.call('GET', '/v1/projects/me', { key })).body.name, 'readable');
    });

    it('see a write as soon as it is answered', async () => {
      const { key } = await server.createProject();
      const put = await server.call('PUT', '/v1/projects/me/provider-credentials', {
        key,
        body: { providerPhoneNumberId: '222', providerAccessToken: 'tok', callbackUrl: 'https://127.0.0.1/hook' },
      });
      assert.equal(put.status, 200, put.text);
      const me = await server.call('GET', '/v1/projects/me', { key });
      assert.equal(me.body.providerPhoneNumberId, '222');
      assert.equal(me.body.callbackUrl, 'https://127.0.0.1/hook');
      const rotated = await server.call('POST', '/v1/projects/me/webhook-secret/rotate', { key });
      assert.equal(rotated.status, 200, rotated.text);
      assert.deepEqual((await server.call('GET', '/v1/projects/me/webhook-secret', { key })).body.secrets, rotated.body.secrets);
      const created = await server.call('POST', '/v1/templates', {
        key,
        body: { name: 'fresh', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi {{1}}.' }] },
      });
      assert.equal((await server.call('GET', `/v1/templates/${created.body.id}`, { key })).status, 200);
      assert.deepEqual((await server.call('GET', '/v1/templates', { key })).body, [created.body]);
    });
  });
}

class RolledBack extends Error {}
