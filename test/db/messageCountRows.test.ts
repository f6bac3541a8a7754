import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HOUR_MS } from '../../src/db/messageCounts.ts';
import { databaseKinds } from '../support/databases.ts';
import { approvedTemplate, createSender } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitUntil } from '../support/webhookEvents.ts';

// Bytes per message (issue 19): the analytics counters hold one row per (project, hour, status,
// template, language) that has traffic, however many messages a small tenant sends in it — never
// a row per message.

for (const kind of databaseKinds()) {
  describe(`message_counts rows of a small tenant (${kind})`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(kind, {
        env: { SVC_SANDBOX_DELIVERY_DELAY_MS: '20', SVC_SANDBOX_READ_DELAY_MS: '40' },
      });
    });
    after(async () => server.close());

    it('one row per hour and key with traffic, not one per message and status', async () => {
      const sender = await createSender(server, 'order_update', 'en_US');
      const { key, projectId } = sender;
      await approvedTemplate(server, key, 'receipt', 'pt_BR');
      const count = 24;
      const replies = await Promise.all(
        Array.from({ length: count }, (_, i) =>
          server.call('POST', '/v1/messages', {
            key,
            body: {
              to: `+1415555${String(1000 + i)}`,
              template: i % 2 === 0 ? 'order_update' : 'receipt',
              language: i % 2 === 0 ? 'en_US' : 'pt_BR',
              variables: { '1': 'Ana', '2': `#${i}` },
            },
          }),
        ),
      );
      for (const reply of replies) assert.equal(reply.status, 202, reply.text);
      await waitUntil(async () => {
        const list = await server.call('GET', '/v1/messages?limit=100', { key });
        return list.body.length === count && list.body.every((message: { status: string }) => message.status === 'READ');
      }, 30_000, 'every message READ');

      const { db } = server.app.database;
      const rows = await db.selectFrom('message_counts').selectAll().where('project_id', '=', projectId).execute();
      // The keys with traffic, from the messages and their events themselves.
      const messages = await db.selectFrom('messages').selectAll().where('project_id', '=', projectId).execute();
      const events = await db.selectFrom('message_events').selectAll().where('project_id', '=', projectId).execute();
      const byId = new Map(messages.map((message) => [message.id, message]));
      const keys = new Set<string>();
      for (const message of messages) {
        keys.add(JSON.stringify([message.queued_at - (message.queued_at % HOUR_MS), 'QUEUED', message.template_name, message.language]));
      }
      for (const event of events) {
        if (event.status === 'QUEUED') continue;
        const message = byId.get(event.message_id)!;
        const hour = Number(event.occurred_at) - (Number(event.occurred_at) % HOUR_MS);
        keys.add(JSON.stringify([hour, event.status, message.template_name, message.language]));
      }
      assert.equal(rows.length, keys.size, 'one row per (hour, status, template, language) with traffic');
      assert.deepEqual(
        new Set(rows.map((row) => JSON.stringify([Number(row.hour), row.status, row.template, row.language]))),
        keys,
      );
      // Two templates × four statuses, within at most two hours: 16 rows at most for 96 status changes.
      assert.ok(rows.length <= 16, `${rows.length} rows`);
      assert.equal(
        rows.reduce((sum, row) => sum + Number(row.count), 0),
        count * 4,
        'every message counted QUEUED, SENT, DELIVERED and READ once',
      );
    });
  });
}
