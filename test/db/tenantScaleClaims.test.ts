import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { claimProjectHeads, queuedProjectsAfter } from '../../src/db/claims.ts';
import { insertAcceptedMessages, queuedMessageRow } from '../../src/db/messages.ts';
import { insertProject } from '../../src/db/projects.ts';
import { ProjectRotation } from '../../src/workers/projectRotation.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';
import { seedBulk } from '../support/bulkSeed.ts';

// Dispatch beside thousands of backlogged tenants, with the real claim statements: the rotation
// reads one page of projects per turn, and a project that just got its first message is claimed
// on the very next turn, before any backlogged tenant — however many there are.

const BACKLOGGED = 2_000;

for (const kind of databaseKinds()) {
  describe(`claims beside ${BACKLOGGED} backlogged projects (${kind})`, () => {
    it('claims a new project’s first message on the next turn, and serves the backlog in turn', async () => {
      await withMigratedDatabase(kind, async (database) => {
        const { db } = database;
        await seedBulk(database, { projects: BACKLOGGED, messages: BACKLOGGED * 2, oldTenantMessages: 2, messagesOnly: true });
        // Every seeded message waits in its project's queue, due long ago.
        await sql`update messages set status = 'QUEUED', due_at = queued_at, sent_at = null, delivered_at = null, read_at = null, failed_at = null`.execute(db);

        const sweeps: number[] = [];
        const rotation = new ProjectRotation({
          sweep: async (after, limit) => {
            const page = await queuedProjectsAfter(db, 'messages', after, limit);
            sweeps.push(page.length);
            return page;
          },
          sweepPage: 500,
        });
        let now = Date.now();
        const turn = async (projectsPerTurn: number) => {
          const { due } = await rotation.next(now, projectsPerTurn);
          const quotas = new Map(due.map((projectId) => [projectId, 1]));
          const rows = await claimProjectHeads(db, 'messages', { now, leaseMs: 60_000, quotas });
          const claimed = new Set(rows.map((row) => row.project_id));
          for (const projectId of due) rotation.served(projectId, claimed.has(projectId));
          now += 10;
          return rows;
        };

        // The backlog is being served, 100 projects a turn.
        const servedBefore = new Set<string>();
        for (let i = 0; i < 5; i++) for (const row of await turn(100)) servedBefore.add(row.project_id);
        assert.equal(servedBefore.size, 500, 'a different project each time: in turn');
        assert.ok(sweeps.every((size) => size <= 500), 'a page of projects per turn');

        await insertProject(db, testProjectRow('proj_newcomer', { created_at: now, updated_at: now }));
        const message = queuedMessageRow(
          {
            projectId: 'proj_newcomer',
            to: '+15551230000',
            template: { id: 'tpl_x', name: 'welcome', language: 'en', category: 'UTILITY' },
            variables: {},
            content: { body: 'Welcome' },
          },
          now,
        );
        await insertAcceptedMessages(db, [message], 'svc_test_wake');
        rotation.announce(['proj_newcomer']);

        const next = await turn(100);
        assert.ok(next.some((row) => row.id === message.id), 'claimed on the next turn');
        assert.equal(next.filter((row) => servedBefore.has(row.project_id)).length, 0, 'before any project already served');
      });
    });
  });
}
