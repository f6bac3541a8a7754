import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';
import { call } from '../support/http.ts';
import { senderAt } from '../support/sending.ts';
import { startServiceProcess } from '../support/process.ts';
import { TEST_ENCRYPTION_KEY } from '../support/server.ts';

const BURST = 2000;
const CONCURRENCY = 64;

/**
 * SIGKILL during a burst of sends: every message that got a 202 must exist after the restart and
 * reach its final state; the test reports how many were submitted to the provider twice.
 */
for (const kind of databaseKinds()) {
  describe(`crash during a burst of sends (${kind})`, () => {
    it('loses no accepted message', { timeout: 180_000 }, async (t) => {
      const database = await createTestDatabase(kind);
      const env = {
        SVC_DATABASE_URL: database.url,
        SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        SVC_LOG_LEVEL: 'warn',
        SVC_SANDBOX_DELIVERY_DELAY_MS: '50',
        SVC_SANDBOX_READ_DELAY_MS: '50',
        SVC_PROVIDER_MAX_MPS: '5000',
        SVC_ALLOW_PRIVATE_CALLBACKS: 'true',
      };
      const loudEnv = { ...env, SVC_LOG_LEVEL: 'info' };
      let service = await startServiceProcess(loudEnv);
      try {
        const { key } = await senderAt(service.url, {
          templateName: 'burst',
          language: 'en',
          bodyText: 'Your code is {{1}} today.',
          phoneNumberId: '1065550009',
        });

        const accepted: string[] = [];
        let failed = 0;
        let next = 0;
        let killed = false;
        const url = service.url;
        const workers = Array.from({ length: CONCURRENCY }, async () => {
          while (next < BURST) {
            const i = next++;
            if (i === BURST / 2 && !killed) {
              killed = true;
              service.child.kill('SIGKILL');
            }
            try {
              const reply = await call(url, 'POST', '/v1/messages', {
                key,
                body: { to: `+55119${String(10_000_000 + i).padStart(8, '0')}`, template: 'burst', language: 'en', variables: { '1': String(i) } },
              });
              if (reply.status === 202) accepted.push(reply.body.id);
              else failed++;
            } catch {
              failed++;
            }
          }
        });
        await Promise.all(workers);
        await service.stop('SIGKILL');
        t.diagnostic(`accepted with 202 before the kill: ${accepted.length}; refused or cut off: ${failed}`);
        assert.ok(accepted.length > 0);

        const db = openDatabase(database.url, { poolSize: 2 });
        // Messages the killed process held (claimed, under a lease it can no longer renew or
        // give back): the restarted service takes them over when their leases end.
        const orphaned = await db.db
          .selectFrom('messages')
          .select('id')
          .where('status', '=', 'QUEUED')
          .where('lease_expires_at', '>', Date.now())
          .execute();
        service = await startServiceProcess(loudEnv);
        try {
          const deadline = Date.now() + 120_000;
          let unfinished = accepted.length;
          while (Date.now() < deadline) {
            const row = await db.db
              .selectFrom('messages')
              .select((eb) => eb.fn.countAll<number>().as('count'))
              .where('status', 'not in', ['READ', 'FAILED'])
              .executeTakeFirstOrThrow();
            unfinished = Number(row.count);
            if (unfinished === 0) break;
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
          const rows = await db.db.selectFrom('messages').select(['id', 'status']).execute();
          const byId = new Map(rows.map((row) => [row.id, row.status]));
          const lost = accepted.filter((id) => !byId.has(id));
          assert.deepEqual(lost, [], 'every message that got a 202 exists');
          const notFinal = accepted.filter((id) => !['READ', 'FAILED'].includes(byId.get(id)!));
          assert.deepEqual(notFinal, [], 'every accepted message reached a final state');
          const duplicates = await sql<{ count: number | string }>`
            select count(*) as count from (
              select message_id from sandbox_submissions group by message_id having count(*) > 1
            ) twice`.execute(db.db);
          const twice = Number(duplicates.rows[0]!.count);
          t.diagnostic(
            `messages stored: ${rows.length}; held under the dead process's lease: ${orphaned.length}; ` +
              `READ: ${rows.filter((r) => r.status === 'READ').length}; ` +
              `submitted to the provider twice: ${twice}`,
          );
          assert.ok(twice <= 2 * 100, 'duplicates are bounded by the batch that was in flight');
        } finally {
          await db.close();
        }
      } finally {
        await service.stop('SIGTERM');
        await database.drop();
      }
    });
  });
}
