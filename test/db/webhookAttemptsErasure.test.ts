import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.ts';
import { eraseProject } from '../../src/db/projectErasure.ts';
import { insertProject } from '../../src/db/projects.ts';
import type { RecordedAttempt } from '../../src/db/webhookDeliveries.ts';
import { WebhookRecorder } from '../../src/workers/webhookRecorder.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';
import { until } from '../support/until.ts';

// A project erased while attempts at its webhook deliveries are being recorded: the recorder
// treats a vanished delivery as done (no foreign-key violation, nothing thrown for its worker to
// log) and records every other project's attempts. On PostgreSQL the recording is made to wait
// for the erasure's uncommitted deletes (the window where a check-then-insert broke).

async function seed(database: Database, now: number): Promise<void> {
  const { db } = database;
  for (const project of ['proj_erased', 'proj_kept']) {
    await insertProject(db, testProjectRow(project, { created_at: now, updated_at: now }));
    await db
      .insertInto('api_keys')
      .values({ id: `key_${project}`, project_id: project, name: 'k', prefix: 'svc_live_xxx', key_hash: `hash_${project}`, created_at: now, last_used_at: null, revoked_at: null })
      .execute();
  }
  const deliveries = [
    ['whd_a1', 'proj_erased'],
    ['whd_a2', 'proj_erased'],
    ['whd_b1', 'proj_kept'],
  ] as const;
  for (const [id, project] of deliveries) {
    await db
      .insertInto('webhook_deliveries')
      .values({
        id,
        project_id: project,
        event_id: `evt_${id}`,
        message_id: null,
        event: 'test',
        url: 'https://hooks.example.com/svc',
        endpoint_id: null,
        template_id: null,
        payload: '{}',
        status: 'pending',
        attempt_count: 0,
        due_at: now + 60_000,
        lease_expires_at: now + 60_000,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
}

// A second attempt: the first (the row's latest until now) moves to webhook_attempts.
function attemptAt(deliveryId: string, now: number): RecordedAttempt {
  const url = 'https://hooks.example.com/svc';
  return {
    previous: { id: `wha_${deliveryId}_1`, delivery_id: deliveryId, attempt: 1, at: now - 1000, url, status_code: 500, duration_ms: 5, error: 'HTTP 500', response_body: null },
    attempt: { id: `wha_${deliveryId}_2`, delivery_id: deliveryId, attempt: 2, at: now, url, status_code: 200, duration_ms: 5, error: null, response_body: 'ok' },
    update: { projectId: deliveryId.startsWith('whd_a') ? 'proj_erased' : 'proj_kept', status: 'succeeded', url, dueAt: null, now },
  };
}

for (const kind of databaseKinds()) {
  describe(`webhook attempts recorded while their project is erased (${kind})`, () => {
    it('records the attempts of the deliveries that remain; the erased ones are done, without an error', async () => {
      await withMigratedDatabase(
        kind,
        async (database) => {
          const { db, dialect } = database;
          const now = Date.now();
          await seed(database, now);
          const recorder = new WebhookRecorder(database);

          let commitErasure!: () => void;
          const erasureMayCommit = new Promise<void>((resolve) => (commitErasure = resolve));
          let erasurePid: number | undefined;
          let erased!: () => void;
          const erasedUncommitted = new Promise<void>((resolve) => (erased = resolve));
          const erasure = db.transaction().execute(async (trx) => {
            if (dialect === 'postgres') {
              erasurePid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
            }
            const counts = await eraseProject(trx, 'proj_erased', 'key_proj_erased');
            erased();
            await erasureMayCommit;
            return counts;
          });
          await erasedUncommitted;

          // Alone in its commit (a batch that fails is retried item by item, which would hide it).
          const first = recorder.attempt(attemptAt('whd_a1', now));
          if (dialect === 'postgres') {
            // The recording waits for the erasure's locks: it can only go on once the erasure ends.
            await until('the recording to wait for the erasure', async () => {
              const waiting = await sql<{ n: number }>`
                select count(*)::int as n from pg_stat_activity where ${erasurePid!}::int = any(pg_blocking_pids(pid))`.execute(db);
              return waiting.rows[0]!.n > 0;
            });
          }
          // Queued behind it meanwhile: another project's attempt, and one more of the erased project.
          const recording = Promise.allSettled([first, ...['whd_b1', 'whd_a2'].map((id) => recorder.attempt(attemptAt(id, now)))]);
          commitErasure();
          const counts = await erasure;
          assert.notEqual(counts, 'requester_revoked');
          assert.equal(typeof counts === 'object' && counts.webhookDeliveries, 2);

          const settled = await recording;
          assert.deepEqual(
            settled.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'recorded')),
            ['recorded', 'recorded', 'recorded'],
          );
          const attempts = await db.selectFrom('webhook_attempts').select(['delivery_id', 'attempt']).orderBy('delivery_id').execute();
          assert.deepEqual(attempts.map((row) => ({ ...row })), [{ delivery_id: 'whd_b1', attempt: 1 }]);
          const deliveries = await db
            .selectFrom('webhook_deliveries')
            .select(['id', 'status', 'attempt_count', 'last_status_code', 'last_response_body'])
            .execute();
          assert.deepEqual(deliveries.map((row) => ({ ...row })), [
            { id: 'whd_b1', status: 'succeeded', attempt_count: 2, last_status_code: 200, last_response_body: 'ok' },
          ]);
        },
        { poolSize: 4 },
      );
    });
  });
}
