import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { queuedMessageRow } from '../../src/db/messages.ts';
import { createTestDatabase } from '../support/databases.ts';
import { senderAt } from '../support/sending.ts';
import { startServiceProcess, type ServiceProcess } from '../support/process.ts';
import { TEST_ENCRYPTION_KEY } from '../support/server.ts';

const MESSAGES = 5000;
const MAX_MPS = 400;

/** Two worker processes drain one PostgreSQL queue: each message is submitted once, at the paced rate. */
describe('scale-out on PostgreSQL', { skip: !process.env.SVC_TEST_POSTGRES_URL }, () => {
  it(`two worker processes drain ${MESSAGES} messages together`, { timeout: 180_000 }, async (t) => {
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
      const sender = await senderAt(api.url, {
        templateName: 'scale',
        language: 'en',
        bodyText: 'Ticket {{1}} is ready now.',
        phoneNumberId: '1065550077',
      });

      // Queue the messages straight into the table (the HTTP path has its own tests): this is about the workers.
      const now = Date.now();
      const rows = Array.from({ length: MESSAGES }, (_, i) =>
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

      const perSecond = await sql<{ second: number | string; n: number | string }>`
        select submitted_at / 1000 as second, count(*) as n from sandbox_submissions group by 1 order by 1`.execute(db.db);
      const busiest = Math.max(...perSecond.rows.map((row) => Number(row.n)));
      t.diagnostic(
        `${MESSAGES} messages drained by 2 workers in ${elapsed} ms; busiest second: ${busiest} submissions (cap ${MAX_MPS}/s)`,
      );
      // A send checked in the last millisecond of a second can be stamped in the next: allow 2 %.
      assert.ok(busiest <= MAX_MPS * 1.02, `busiest second ${busiest} exceeds the cap`);
      assert.ok(elapsed >= ((MESSAGES / MAX_MPS) - 1) * 1000, 'the drain was paced');

      const byWorker = await sql<{ n: number | string }>`select count(distinct provider_message_id) as n from sandbox_submissions`.execute(db.db);
      assert.equal(Number(byWorker.rows[0]!.n), MESSAGES);
    } finally {
      await Promise.all(processes.map((service) => service.stop('SIGTERM')));
      await db.close();
      await database.drop();
    }
  });
});
