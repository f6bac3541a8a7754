import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { queuedMessageRow } from '../../src/db/messages.ts';
import { insertProject } from '../../src/db/projects.ts';
import { insertSandboxRecords, type SandboxRecord } from '../../src/db/sandboxRecords.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';

// The sandbox's records of a group of submissions: written in one go (on PostgreSQL one
// statement), and only for messages that still exist — a message erased with its project while
// it was being submitted leaves no record behind.

for (const kind of databaseKinds()) {
  describe(`sandbox records (${kind})`, () => {
    it('writes the submissions and promised reports of existing messages, none of erased ones', async () => {
      await withMigratedDatabase(kind, async (database) => {
        const { db } = database;
        const now = Date.now();
        await insertProject(db, testProjectRow('proj_records', { created_at: now, updated_at: now }));
        const message = queuedMessageRow(
          {
            projectId: 'proj_records',
            to: '+5511987654321',
            template: { id: 'tpl_x', name: 'notice', language: 'en', category: 'UTILITY' },
            variables: { '1': 'x' },
            content: { body: 'Notice x' },
          },
          now,
        );
        await db.insertInto('messages').values(message).execute();
        const record = (messageId: string, n: number, reports: number): SandboxRecord => ({
          submission: {
            id: `att_sub_${n}`,
            message_id: messageId,
            provider_message_id: `wamid.${n}`,
            recipient: '+5511987654321',
            outcome: 'accepted',
            submitted_at: now,
          },
          reports: Array.from({ length: reports }, (_, i) => ({
            id: `att_rep_${n}_${i}`,
            message_id: messageId,
            provider_message_id: `wamid.${n}`,
            status: i === 0 ? ('DELIVERED' as const) : ('READ' as const),
            error: i === 0 ? null : '{"code":1}',
            due_at: now + 1000 * (i + 1),
            lease_expires_at: null,
          })),
        });
        const channel = kind === 'postgres' ? 'svc_test_records_sandbox' : undefined;
        await db.transaction().execute((trx) =>
          insertSandboxRecords(trx, [record(message.id, 1, 2), record('msg_erased', 2, 2), record(message.id, 3, 0)], channel),
        );
        const submissions = await db.selectFrom('sandbox_submissions').selectAll().orderBy('id').execute();
        assert.deepEqual(
          submissions.map((row) => [row.id, row.message_id, row.provider_message_id, row.outcome, Number(row.submitted_at)]),
          [
            ['att_sub_1', message.id, 'wamid.1', 'accepted', now],
            ['att_sub_3', message.id, 'wamid.3', 'accepted', now],
          ],
        );
        const reports = await db.selectFrom('sandbox_reports').selectAll().orderBy('id').execute();
        assert.deepEqual(
          reports.map((row) => [row.id, row.status, row.error, Number(row.due_at), row.lease_expires_at]),
          [
            ['att_rep_1_0', 'DELIVERED', null, now + 1000, null],
            ['att_rep_1_1', 'READ', '{"code":1}', now + 2000, null],
          ],
        );
        // Only erased messages: nothing written, no error.
        await db.transaction().execute((trx) => insertSandboxRecords(trx, [record('msg_gone', 4, 1)], channel));
        assert.equal((await db.selectFrom('sandbox_submissions').select('id').execute()).length, 2);
      });
    });
  });
}
