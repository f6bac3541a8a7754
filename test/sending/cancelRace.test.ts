import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer } from '../support/server.ts';
import { createSender, sendBody } from '../support/sending.ts';
import { until } from '../support/until.ts';

// A cancel racing the dispatcher either cancels the message (and it is never submitted) or is
// refused with 409 (and the message is submitted): never both, never neither.

const MESSAGES = 200;

for (const kind of databaseKinds()) {
  describe(`cancel racing the dispatcher (${kind})`, () => {
    it(`${MESSAGES} cancels against a running dispatcher: each message CANCELED and never submitted, or 409 and submitted`, async (t) => {
      const server = await startTestServer(kind, {
        env: { SVC_PROVIDER_MAX_MPS: '25', SVC_SANDBOX_DELIVERY_DELAY_MS: '50', SVC_SANDBOX_READ_DELAY_MS: '50' },
      });
      try {
        const sender = await createSender(server);
        // All due at one moment, accepted in one batch (a busy machine makes 200 single sends take
        // longer than any lead time), so the cancels meet the dispatcher.
        const dueAt = Date.now() + 3000;
        const sendAt = new Date(dueAt).toISOString();
        const { template, language } = sendBody(sender);
        const items = Array.from({ length: MESSAGES }, (_, i) => {
          const { to, variables } = sendBody(sender, `+55119876${String(10000 + i).slice(1)}`);
          return { to, variables, sendAt };
        });
        const batch = await server.call('POST', '/v1/messages/batch', { key: sender.key, body: { template, language, items } });
        assert.equal(batch.status, 202, batch.text);
        assert.equal(batch.body.acceptedCount, MESSAGES, batch.text);
        const ids: string[] = batch.body.items.map((item: { message: { id: string } }) => item.message.id);
        // Cancel them all, in the order they were sent, a few at a time, from just before they fall
        // due, while the dispatcher works through them at 25 a second: some go out first, some are
        // being submitted, some are still waiting.
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueAt - 150 - Date.now())));
        const answers = new Map<string, number>();
        let next = 0;
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            while (next < ids.length) {
              const id = ids[next++]!;
              const reply = await server.call('POST', `/v1/messages/${id}/cancel`, { key: sender.key });
              assert.ok(reply.status === 200 || reply.status === 409, `${reply.status} ${reply.text}`);
              if (reply.status === 200) assert.equal(reply.body.status, 'CANCELED');
              else assert.equal(reply.body.code, 'message_not_cancelable');
              answers.set(id, reply.status);
            }
          }),
        );
        const statuses = await until('every message settled', async () => {
          const rows = await server.app.database.db
            .selectFrom('messages')
            .select(['id', 'status'])
            .where('project_id', '=', sender.projectId)
            .execute();
          return rows.every((row) => row.status !== 'QUEUED') && new Map(rows.map((row) => [row.id, row.status]));
        });
        // A little longer: a submission the dispatcher still held would show up now.
        await new Promise((resolve) => setTimeout(resolve, 500));
        const submissions = await server.app.database.db
          .selectFrom('sandbox_submissions')
          .select(['message_id', 'outcome'])
          .where('message_id', 'in', ids)
          .execute();
        const submitted = new Set(submissions.filter((row) => row.outcome === 'accepted').map((row) => row.message_id));
        for (const id of ids) {
          if (answers.get(id) === 200) {
            assert.equal(statuses.get(id), 'CANCELED', `${id} was canceled`);
            assert.ok(!submitted.has(id), `${id} was canceled and yet submitted`);
          } else {
            assert.notEqual(statuses.get(id), 'CANCELED', `${id} was refused and yet canceled`);
            assert.ok(submitted.has(id), `${id} was refused (409) and never submitted`);
          }
        }
        const canceled = [...answers.values()].filter((status) => status === 200).length;
        t.diagnostic(`${canceled} canceled, ${MESSAGES - canceled} refused (409)`);
        assert.ok(canceled > 0 && canceled < MESSAGES, `both outcomes happened (${canceled} canceled of ${MESSAGES})`);
      } finally {
        await server.close();
      }
    });
  });
}
