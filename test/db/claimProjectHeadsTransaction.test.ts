import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Kysely, sql, SqliteDialect, type SqliteDatabase } from 'kysely';
import { claimProjectHeads } from '../../src/db/claims.ts';
import type { Db } from '../../src/db/database.ts';
import { insertAcceptedMessages, queuedMessageRow } from '../../src/db/messages.ts';
import { insertProject } from '../../src/db/projects.ts';
import { openSqlite } from '../../src/db/sqlite.ts';
import type { Tables } from '../../src/db/tables.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';

// A claim over many projects is one transaction: all of it or none of it (a failed claim must not
// leave rows leased that the caller never got), and on SQLite one commit, not one per project
// (issue 24: a hundred autocommits in one turn of the event loop).

const PROJECTS = ['proj_a', 'proj_b', 'proj_c'];
const PER_PROJECT = 3;

async function seed(db: Db, now: number): Promise<void> {
  for (const projectId of PROJECTS) {
    await insertProject(db, testProjectRow(projectId, { created_at: now, updated_at: now }));
    const rows = Array.from({ length: PER_PROJECT }, (_, i) =>
      queuedMessageRow(
        {
          projectId,
          to: `+1555123000${i}`,
          template: { id: 'tpl_x', name: 'welcome', language: 'en', category: 'UTILITY' },
          variables: {},
          content: { body: 'Welcome' },
        },
        now - 1000 + i,
      ),
    );
    await insertAcceptedMessages(db, rows, 'svc_test_wake');
  }
}

const allQuotas = () => new Map(PROJECTS.map((projectId) => [projectId, PER_PROJECT]));

async function leasedCount(db: Db): Promise<number> {
  const result = await sql<{ n: number | string }>`select count(*) as n from messages where lease_expires_at is not null`.execute(db);
  return Number(result.rows[0]!.n);
}

for (const kind of databaseKinds()) {
  describe(`claimProjectHeads is all or nothing (${kind})`, () => {
    it('a claim failing at its second project leaves the first project’s rows unclaimed', async () => {
      await withMigratedDatabase(kind, async ({ db }) => {
        const now = Date.now();
        await seed(db, now);
        // The second project's rows refuse to be claimed.
        if (kind === 'sqlite') {
          await sql`create trigger refuse_claim before update of lease_expires_at on messages
            when new.project_id = 'proj_b' begin select raise(abort, 'claim refused'); end`.execute(db);
        } else {
          await sql`create function refuse_claim() returns trigger language plpgsql as $$
            begin raise exception 'claim refused'; end $$`.execute(db);
          await sql`create trigger refuse_claim before update of lease_expires_at on messages
            for each row when (new.project_id = 'proj_b') execute function refuse_claim()`.execute(db);
        }
        await assert.rejects(claimProjectHeads(db, 'messages', { now, leaseMs: 60_000, quotas: allQuotas() }), /claim refused/);
        assert.equal(await leasedCount(db), 0, 'no row leased by the failed claim');

        await sql`drop trigger refuse_claim ${kind === 'postgres' ? sql`on messages` : sql``}`.execute(db);
        const rows = await claimProjectHeads(db, 'messages', { now, leaseMs: 60_000, quotas: allQuotas() });
        assert.equal(rows.length, PROJECTS.length * PER_PROJECT, 'every row claimable afterwards');
        assert.equal(await leasedCount(db), PROJECTS.length * PER_PROJECT);
      });
    });
  });
}

describe('claimProjectHeads on SQLite', () => {
  it('runs every project’s statement inside one transaction and commits once', async () => {
    await withMigratedDatabase('sqlite', async (database) => {
      const now = Date.now();
      await seed(database.db, now);
      // A second connection to the same file, whose statements are watched as they run.
      const writer = openSqlite(database.sqlitePath!);
      const seen: { sql: string; inTransaction: boolean }[] = [];
      const watched: SqliteDatabase = {
        close: () => writer.close(),
        prepare: (text) => {
          const statement = writer.prepare(text);
          const watch = <R>(run: () => R): R => {
            seen.push({ sql: text.trim().toLowerCase(), inTransaction: writer.raw.isTransaction });
            return run();
          };
          return {
            reader: statement.reader,
            all: (parameters) => watch(() => statement.all(parameters)),
            run: (parameters) => watch(() => statement.run(parameters)),
            iterate: (parameters) => watch(() => statement.iterate(parameters)),
          };
        },
      };
      const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: watched }) });
      try {
        const rows = await claimProjectHeads(db, 'messages', { now, leaseMs: 60_000, quotas: allQuotas() });
        assert.equal(rows.length, PROJECTS.length * PER_PROJECT);
        const updates = seen.filter((statement) => statement.sql.startsWith('update'));
        assert.equal(updates.length, 1, 'one statement for every project of the same quota');
        assert.ok(updates.every((statement) => statement.inTransaction), 'inside the transaction');
        assert.deepEqual(
          seen.map((statement) => statement.sql.split(/\s/)[0]),
          ['begin', 'update', 'commit'],
          'one begin, one commit',
        );
        // Quotas that differ: a statement per distinct quota, each project held to its own.
        await sql`update messages set due_at = ${now - 1}, lease_expires_at = null`.execute(db);
        seen.length = 0;
        const mixed = new Map([['proj_a', 1], ['proj_b', 2], ['proj_c', 1]]);
        const claimed = await claimProjectHeads(db, 'messages', { now, leaseMs: 60_000, quotas: mixed });
        const perProject = Object.fromEntries(PROJECTS.map((projectId) => [projectId, claimed.filter((row) => row.project_id === projectId).length]));
        assert.deepEqual(perProject, { proj_a: 1, proj_b: 2, proj_c: 1 });
        assert.deepEqual(
          seen.map((statement) => statement.sql.split(/\s/)[0]),
          ['begin', 'update', 'update', 'commit'],
          'two quotas, two statements, one commit',
        );
      } finally {
        await db.destroy();
      }
    });
  });
});
