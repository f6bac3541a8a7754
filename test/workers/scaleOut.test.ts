import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { queuedMessageRow } from '../../src/db/messages.ts';
import { createTestDatabase } from '../support/databases.ts';
import { senderAt } from '../support/sending.ts';
import { startServiceProcess, type ServiceProcess } from '../support/process.ts';
import { TEST_ENCRYPTION_KEY } from '../support/server.ts';

const MAX_MPS = 400;
/** Two sending numbers with caps of their own (the provider's figure for each), below the default. */
const NUMBERS = [
  { phoneNumberId: '1065550077', messagesPerSecond: 300, messages: 3000 },
  { phoneNumberId: '1065550078', messagesPerSecond: 100, messages: 1000 },
];
const MESSAGES = NUMBERS.reduce((sum, number) => sum + number.messages, 0);

/**
 * Two worker processes drain one PostgreSQL queue: each message is submitted once, and each
 * number at its own pace across both processes.
 */
describe('scale-out on PostgreSQL', { skip: !process.env.SVC_TEST_POSTGRES_URL }, () => {
  it(`two worker processes drain ${MESSAGES} messages of two numbers together`, { timeout: 180_000 }, async (t) => {
    const database = await createTestDatabase('postgres');
    const env = {
      SVC_DATABASE_URL: database.url,
      SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      SVC_LOG_LEVEL: 'warn',
      SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000',
      SVC_PROVIDER_MAX_MPS: String(MAX_MPS),
    };
    const processes: ServiceProcess[] = [];
    const db = openDatabase(database.url, { poolSize: 4 });
    try {
      const api = await startServiceProcess({ ...env, SVC_LOG_LEVEL: 'info' }, ['serve', '--role', 'api']);
      processes.push(api);
      // The api process runs no workers: the test helper settles the review, as a provider would.
      const now = Date.now();
      const projects: string[] = [];
      for (const number of NUMBERS) {
        const sender = await senderAt(api.url, {
          templateName: 'scale',
          language: 'en',
          bodyText: 'Ticket {{1}} is ready now.',
          phoneNumberId: number.phoneNumberId,
        });
        projects.push(sender.projectId);
        await db.db
          .updateTable('projects')
          .set({ provider_messages_per_second: number.messagesPerSecond })
          .where('id', '=', sender.projectId)
          .execute();
        // Queue the messages straight into the table (the HTTP path has its own tests): this is about the workers.
        const rows = Array.from({ length: number.messages }, (_, i) =>
          queuedMessageRow(
            {
              projectId: sender.projectId,
              to: `+55119${String(20_000_000 + i)}`,
              template: { id: sender.templateId, name: 'scale', language: 'en', category: 'UTILITY' },
              variables: { '1': String(i) },
              content: { body: `Ticket ${i} is ready now.` },
            },
            now,
          ),
        );
        for (let i = 0; i < rows.length; i += 500) await db.db.insertInto('messages').values(rows.slice(i, i + 500)).execute();
      }

      const started = Date.now();
      for (let i = 0; i < 2; i++) {
        processes.push(await startServiceProcess({ ...env, SVC_LOG_LEVEL: 'info' }, ['serve', '--role', 'worker']));
      }

      const deadline = Date.now() + 120_000;
      let queued = MESSAGES;
      while (Date.now() < deadline && queued > 0) {
        const row = await db.db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .where('status', '=', 'QUEUED')
          .executeTakeFirstOrThrow();
        queued = Number(row.count);
        if (queued > 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const elapsed = Date.now() - started;
      assert.equal(queued, 0, 'every message was sent');

      const perMessage = await sql<{ twice: number | string; total: number | string }>`
        select count(*) filter (where n > 1) as twice, sum(n) as total
        from (select message_id, count(*) as n from sandbox_submissions group by message_id) s`.execute(db.db);
      assert.equal(Number(perMessage.rows[0]!.total), MESSAGES, 'one submission per message');
      assert.equal(Number(perMessage.rows[0]!.twice), 0, 'no message was submitted twice');

      for (const [index, number] of NUMBERS.entries()) {
        const perSecond = await sql<{ n: number | string }>`
          select count(*) as n from sandbox_submissions s join messages m on m.id = s.message_id
          where m.project_id = ${projects[index]!} group by s.submitted_at / 1000`.execute(db.db);
        const busiest = Math.max(...perSecond.rows.map((row) => Number(row.n)));
        t.diagnostic(`number ${number.phoneNumberId}: busiest second ${busiest} submissions (its cap ${number.messagesPerSecond}/s)`);
        assert.ok(busiest <= number.messagesPerSecond, `busiest second ${busiest} exceeds the cap of ${number.phoneNumberId}`);
      }
      t.diagnostic(`${MESSAGES} messages drained by 2 workers in ${elapsed} ms`);
      assert.ok(elapsed >= (NUMBERS[0]!.messages / NUMBERS[0]!.messagesPerSecond - 1) * 1000, 'the drain was paced');

      const byWorker = await sql<{ n: number | string }>`select count(distinct provider_message_id) as n from sandbox_submissions`.execute(db.db);
      assert.equal(Number(byWorker.rows[0]!.n), MESSAGES);
    } finally {
      await Promise.all(processes.map((service) => service.stop('SIGTERM')));
      await db.close();
      await database.drop();
    }
  });
});
