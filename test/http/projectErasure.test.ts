import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import type { Db } from '../../src/db/database.ts';
import { databaseKinds } from '../support/databases.ts';
import { type Sender, senderAt, sendBody, waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { hang, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';
import { writeGate } from '../support/writeGate.ts';

// Issue #10, point 12: DELETE /v1/projects/me erases the project and everything it holds.

/** Rows anywhere in the database that still belong to the project. */
async function leftovers(db: Db, dialect: string, projectId: string, messageIds: string[]): Promise<string[]> {
  const tables =
    dialect === 'sqlite'
      ? await sql<{ name: string }>`
          select m.name from sqlite_master m join pragma_table_info(m.name) c
          where m.type = 'table' and c.name = 'project_id'`.execute(db)
      : await sql<{ name: string }>`
          select table_name as name from information_schema.columns
          where table_schema = current_schema() and column_name = 'project_id'`.execute(db);
  const found: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql<{ n: number }>`select count(*) as n from ${sql.table(name)} where project_id = ${projectId}`.execute(db);
    if (Number(rows.rows[0]!.n) > 0) found.push(name);
  }
  const projects = await db.selectFrom('projects').select('id').where('id', '=', projectId).execute();
  if (projects.length > 0) found.push('projects');
  if (messageIds.length > 0) {
    for (const table of ['sandbox_submissions', 'sandbox_reports', 'message_events', 'webhook_deliveries'] as const) {
      const rows = await db.selectFrom(table).select('message_id').where('message_id', 'in', messageIds).execute();
      if (rows.length > 0) found.push(`${table} (by message)`);
    }
  }
  return found;
}

async function send(server: TestServer, sender: Sender, to?: string, idempotencyKey?: string): Promise<string> {
  const reply = await server.call('POST', '/v1/messages', {
    key: sender.key,
    body: sendBody(sender, to),
    ...(idempotencyKey && { headers: { 'idempotency-key': idempotencyKey } }),
  });
  assert.equal(reply.status, 202, reply.text);
  return reply.body.id;
}

for (const kind of databaseKinds()) {
  describe(`project erasure (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    const errors: string[] = [];
    before(async () => {
      receiver = await startWebhookReceiver();
      const logger = pino({ level: 'warn' }, { write: (line: string) => errors.push(line) });
      server = await startTestServer(kind, {
        logger,
        env: { SVC_SEND_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms,50ms,50ms,50ms,50ms,50ms,50ms' },
      });
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    it('erases everything and answers with what it erased; the keys are 401 and the ids 404 after', async () => {
      const alice = await senderAt(server.url);
      const bob = await senderAt(server.url);
      const spare = (await server.call('POST', '/v1/api-keys', { key: alice.key, body: { name: 'spare' } })).body;
      await server.call('PUT', '/v1/projects/me/provider-credentials', { key: alice.key, body: { callbackUrl: receiver.url } });
      const pending = await server.call('POST', '/v1/templates', {
        key: alice.key,
        body: { name: 'pending_one', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi there {{1}}.' }] },
      });
      const messageIds = [await send(server, alice, undefined, 'order-1'), await send(server, alice)];
      for (const id of messageIds) {
        await server.call('POST', `/v1/test-helpers/messages/${id}/advance`, { key: alice.key, body: { status: 'READ' } });
        await waitForStatus(server, alice.key, id, 'READ');
      }
      const bobMessage = await send(server, bob);
      await receiver.waitFor((arrivals) => arrivals.filter((arrival) => messageIds.some((id) => arrival.body.includes(id))).length >= 6);
      const deliveries = (await server.call('GET', '/v1/webhook-deliveries?limit=200', { key: alice.key })).body;
      await Promise.all(
        deliveries.map(async (delivery: any) => {
          for (let i = 0; i < 200; i++) {
            const read = await server.call('GET', `/v1/webhook-deliveries/${delivery.id}`, { key: alice.key });
            if (read.body.status === 'succeeded') return;
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
        }),
      );
      let events = 0;
      for (const id of messageIds) events += (await server.call('GET', `/v1/messages/${id}/events`, { key: alice.key })).body.length;

      const erased = await server.call('DELETE', '/v1/projects/me', { key: alice.key });
      assert.equal(erased.status, 200, erased.text);
      assert.equal(erased.body.projectId, alice.projectId);
      assert.equal(erased.body.id, alice.projectId);
      assert.match(erased.body.erasedAt, /Z$/);
      assert.deepEqual(erased.body.erased, {
        apiKeys: 2,
        providerCredentials: 1,
        templates: 2,
        messages: 2,
        messageEvents: events,
        idempotencyKeys: 1,
        webhookDeliveries: deliveries.length,
        webhookAttempts: deliveries.length,
      });
      assert.ok(!erased.text.includes('svc_live_') && !erased.text.includes('EAAG'));

      for (const key of [alice.key, spare.key]) {
        for (const [method, path] of [
          ['GET', '/v1/projects/me'],
          ['GET', '/v1/messages'],
          ['DELETE', '/v1/projects/me'],
        ] as const) {
          const reply = await server.call(method, path, { key });
          assert.equal(reply.status, 401, `${method} ${path}`);
        }
      }
      for (const path of [
        `/v1/messages/${messageIds[0]}`,
        `/v1/messages/${messageIds[0]}/events`,
        `/v1/templates/${pending.body.id}`,
        `/v1/templates/${alice.templateId}`,
        `/v1/webhook-deliveries/${deliveries[0].id}`,
      ]) {
        assert.equal((await server.call('GET', path, { key: bob.key })).status, 404, path);
      }
      assert.equal((await server.call('DELETE', `/v1/api-keys/${spare.id}`, { key: bob.key })).status, 404);
      assert.deepEqual(await leftovers(server.app.database.db, server.app.database.dialect, alice.projectId, messageIds), []);

      // Bob is untouched, and the workers go on serving him.
      assert.equal((await server.call('GET', `/v1/messages/${bobMessage}`, { key: bob.key })).status, 200);
      await waitForStatus(server, bob.key, await send(server, bob), 'READ');
    });

    it('refuses a revoked key and touches no other project', async () => {
      const alice = await senderAt(server.url);
      const bob = await senderAt(server.url);
      const spare = (await server.call('POST', '/v1/api-keys', { key: alice.key, body: { name: 'spare' } })).body;
      await server.call('DELETE', `/v1/api-keys/${spare.id}`, { key: alice.key });
      assert.equal((await server.call('DELETE', '/v1/projects/me', { key: spare.key })).status, 401);
      assert.equal((await server.call('DELETE', '/v1/projects/me')).status, 401);
      assert.equal((await server.call('DELETE', '/v1/projects/me', { key: 'svc_live_' + 'z'.repeat(40) })).status, 401);

      const aliceMessage = await send(server, alice);
      assert.equal((await server.call('DELETE', '/v1/projects/me', { key: bob.key })).status, 200);
      assert.equal((await server.call('GET', '/v1/projects/me', { key: alice.key })).status, 200);
      assert.equal((await server.call('GET', `/v1/messages/${aliceMessage}`, { key: alice.key })).status, 200);
      assert.equal((await server.call('GET', `/v1/templates/${alice.templateId}`, { key: alice.key })).status, 200);
    });

    it('is documented in OpenAPI', async () => {
      const doc = (await server.call('GET', '/openapi.json')).body;
      const erase = doc.paths['/v1/projects/me'].delete;
      assert.ok(erase.responses['200'] && erase.responses['401']);
      assert.ok(doc.paths['/v1/projects/me'].get);
    });

    it('refuses a write of the project that was in flight when the erasure committed', async () => {
      const gate = writeGate('/v1/api-keys');
      const paused = await startTestServer(kind, { database: server.database, testHooks: gate.hooks });
      try {
        const { key, projectId } = await paused.createProject();
        gate.arm();
        const inFlight = paused.call('POST', '/v1/api-keys', { key, body: { name: 'late' } });
        await gate.atWrite;
        assert.equal((await paused.call('DELETE', '/v1/projects/me', { key })).status, 200);
        gate.release();
        const late = await inFlight;
        assert.equal(late.status, 401, late.text);
        assert.deepEqual(await leftovers(paused.app.database.db, paused.app.database.dialect, projectId, []), []);
      } finally {
        await paused.app.stop();
      }
    });

    it('leaves the workers running when a project vanishes with sends and webhooks in flight', async () => {
      const hanging = await startWebhookReceiver(hang);
      try {
        const doomed = await senderAt(server.url);
        await server.call('PUT', '/v1/projects/me/provider-credentials', { key: doomed.key, body: { callbackUrl: hanging.url } });
        const messageIds: string[] = [];
        // Retried every 50 ms: some are being claimed or submitted when the erasure commits.
        for (let i = 0; i < 10; i++) messageIds.push(await send(server, doomed, '+15550000002'));
        messageIds.push(await send(server, doomed));
        await hanging.waitFor((arrivals) => arrivals.length >= 1);
        const errorsBefore = errors.length;

        const erased = await server.call('DELETE', '/v1/projects/me', { key: doomed.key });
        assert.equal(erased.status, 200, erased.text);
        await hanging.close();

        const bob = await senderAt(server.url);
        await server.call('PUT', '/v1/projects/me/provider-credentials', { key: bob.key, body: { callbackUrl: receiver.url } });
        const bobMessage = await send(server, bob);
        await waitForStatus(server, bob.key, bobMessage, 'READ');
        await receiver.waitFor((arrivals) => arrivals.some((arrival) => arrival.body.includes(bobMessage) && arrival.body.includes('message.read')));
        assert.deepEqual(await leftovers(server.app.database.db, server.app.database.dialect, doomed.projectId, messageIds), []);
        // The attempt that was in flight has no delivery left to record it on: nothing to log.
        const logged = errors
          .slice(errorsBefore)
          .map((line) => JSON.parse(line))
          .filter((line) => line.level >= 50);
        assert.deepEqual(logged, []);
      } finally {
        await hanging.close().catch(() => {});
      }
    });
  });
}
