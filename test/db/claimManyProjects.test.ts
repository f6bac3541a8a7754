import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { claimProjectHeads } from '../../src/db/claims.ts';
import type { Db } from '../../src/db/database.ts';
import { insertAcceptedMessages, queuedMessageRow } from '../../src/db/messages.ts';
import { insertProject } from '../../src/db/projects.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';

// A claim names many projects at once (on SQLite one statement per distinct quota): each project
// gets its own oldest due rows, up to its own quota — never another project's, never a row due
// later or leased, never more than asked — exactly as if each had been claimed alone.

const PROJECTS = 40;
const projectId = (p: number) => `proj_many${String(p).padStart(3, '0')}`;

interface Seeded {
  /** Project → its rows claimable now, oldest due first. */
  claimable: Map<string, string[]>;
}

async function seed(db: Db, now: number): Promise<Seeded> {
  const claimable = new Map<string, string[]>();
  for (let p = 0; p < PROJECTS; p++) {
    await insertProject(db, testProjectRow(projectId(p), { created_at: now, updated_at: now }));
    const rows = Array.from({ length: p % 6 }, (_, i) =>
      queuedMessageRow(
        {
          projectId: projectId(p),
          to: `+1555123${String(p).padStart(3, '0')}${i}`,
          template: { id: 'tpl_x', name: 'welcome', language: 'en', category: 'UTILITY' },
          variables: {},
          content: { body: 'Welcome' },
        },
        now - 10_000 + i,
      ),
    );
    if (rows.length === 0) continue;
    await insertAcceptedMessages(db, rows, 'svc_test_wake');
    // Due times out of id order (the claim goes by due time), one row due later, one leased.
    const due: { id: string; dueAt: number }[] = [];
    for (const [i, row] of rows.entries()) {
      const dueAt = now - 1000 * ((i * 7 + p) % 5) - i;
      if (i === 3) {
        await sql`update messages set due_at = ${now + 60_000} where id = ${row.id}`.execute(db);
      } else if (i === 4) {
        await sql`update messages set due_at = ${now + 30_000}, lease_expires_at = ${now + 30_000} where id = ${row.id}`.execute(db);
      } else {
        await sql`update messages set due_at = ${dueAt} where id = ${row.id}`.execute(db);
        due.push({ id: row.id, dueAt });
      }
    }
    claimable.set(projectId(p), due.sort((a, b) => a.dueAt - b.dueAt).map((row) => row.id));
  }
  return { claimable };
}

for (const kind of databaseKinds()) {
  describe(`claimProjectHeads over many projects (${kind})`, () => {
    it('gives each project its own oldest due rows, up to its own quota', async () => {
      await withMigratedDatabase(kind, async ({ db }) => {
        const now = Date.now();
        const { claimable } = await seed(db, now);
        // Quotas 1, 2 and 3 (and 0: nothing), projects with and without work, one unknown project.
        const quotas = new Map<string, number>();
        for (let p = 0; p < PROJECTS; p++) quotas.set(projectId(p), p % 4);
        quotas.set('proj_unknown', 2);
        const rows = await claimProjectHeads(db, 'messages', { now, leaseMs: 60_000, quotas });
        assert.equal(new Set(rows.map((row) => row.id)).size, rows.length, 'no row twice');
        for (let p = 0; p < PROJECTS; p++) {
          const expected = (claimable.get(projectId(p)) ?? []).slice(0, p % 4);
          const got = rows.filter((row) => row.project_id === projectId(p));
          assert.deepEqual(new Set(got.map((row) => row.id)), new Set(expected), `project ${p}: quota ${p % 4}`);
          for (const row of got) {
            assert.equal(Number(row.lease_expires_at), now + 60_000);
            assert.equal(Number(row.due_at), now + 60_000, 'due at the lease end: out of the due range');
          }
        }
        // Claimed rows are out of the due range: the same claim again gets each project's next ones.
        const again = await claimProjectHeads(db, 'messages', { now, leaseMs: 60_000, quotas });
        for (let p = 0; p < PROJECTS; p++) {
          const expected = (claimable.get(projectId(p)) ?? []).slice(p % 4, 2 * (p % 4));
          assert.deepEqual(new Set(again.filter((row) => row.project_id === projectId(p)).map((row) => row.id)), new Set(expected), `project ${p}, again`);
        }
      });
    });

    it('claims as many projects as it is given, beyond one statement’s share', async () => {
      await withMigratedDatabase(kind, async ({ db }) => {
        const now = Date.now();
        const many = 1_203;
        const ids = Array.from({ length: many }, (_, i) => `proj_wide${String(i + 1).padStart(4, '0')}`);
        for (let i = 0; i < ids.length; i += 200) {
          await db.insertInto('projects').values(ids.slice(i, i + 200).map((id) => testProjectRow(id, { created_at: now, updated_at: now }))).execute();
        }
        for (let i = 0; i < ids.length; i += 200) {
          await insertAcceptedMessages(
            db,
            ids.slice(i, i + 200).map((id) =>
              queuedMessageRow({ projectId: id, to: '+15551230000', template: { id: 'tpl_x', name: 'welcome', language: 'en', category: 'UTILITY' }, variables: {}, content: { body: 'Hi' } }, now - 1000),
            ),
            'svc_test_wake',
          );
        }
        const rows = await claimProjectHeads(db, 'messages', { now, leaseMs: 60_000, quotas: new Map(ids.map((id) => [id, 1])) });
        assert.equal(rows.length, many);
        assert.deepEqual(new Set(rows.map((row) => row.project_id)), new Set(ids));
      });
    });
  });
}
