import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { claimDue } from '../../src/db/claims.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';
import { describePlan, explainingDb, type ExplainingDb, planNodes } from '../support/queryPlans.ts';

// A queue claimed through claimDue (the sandbox's reports, template reviews) fills in bursts,
// after its statistics were taken while it was empty: the claim must still read its page by the
// due index and each claimed row by its key, never the whole queue. What is asserted is the plan.

const ROWS = 20_000;
const NOW = 1_800_000_000_000;

for (const kind of databaseKinds()) {
  describe(`claimDue's plan on a queue grown after its statistics (${kind})`, () => {
    let database: Database;
    let explaining: ExplainingDb;

    before(async () => {
      const testDb = await createTestDatabase(kind);
      database = openDatabase(testDb.url, { poolSize: 2 });
      await migrateToLatest(database.db);
      if (kind === 'postgres') await sql`analyze sandbox_reports`.execute(database.db);
      const rows = Array.from({ length: ROWS }, (_, i) => ({
        id: `rep_${String(i).padStart(10, '0')}`,
        message_id: `msg_${String(i).padStart(10, '0')}`,
        provider_message_id: `sandbox.${i}`,
        status: 'DELIVERED' as const,
        error: null,
        due_at: NOW - ROWS + i,
        lease_expires_at: null,
      }));
      for (let start = 0; start < rows.length; start += 1_000) {
        await database.db.insertInto('sandbox_reports').values(rows.slice(start, start + 1_000)).execute();
      }
      explaining = explainingDb(database);
    });
    after(async () => {
      await explaining?.close();
      await database?.close();
    });

    it('reads the page by the due index and each claimed row by its primary key', async () => {
      await claimDue(explaining.db, 'sandbox_reports', { now: NOW, limit: 100, leaseMs: 30_000 });
      const [claim] = explaining.take();
      const description = `${claim!.sql}\n  plan: ${describePlan(claim!.plan)}`;
      if (Array.isArray(claim!.plan)) {
        const lines = claim!.plan;
        assert.ok(!lines.some((line) => /^SCAN sandbox_reports/.test(line)), `no scan: ${description}`);
        assert.ok(lines.some((line) => /^SEARCH sandbox_reports USING INDEX sandbox_reports_due/.test(line)), `the page by due: ${description}`);
        assert.ok(lines.some((line) => /^SEARCH sandbox_reports USING (COVERING )?INDEX sqlite_autoindex_sandbox_reports_1 \(id=\?\)/.test(line)), `rows by key: ${description}`);
        return;
      }
      const nodes = planNodes(claim!.plan);
      const reads = nodes.filter((node) => node['Relation Name'] === 'sandbox_reports');
      assert.ok(!reads.some((node) => node['Node Type'] === 'Seq Scan'), `no scan of the queue: ${description}`);
      assert.ok(!nodes.some((node) => /Join|Nested Loop/.test(node['Node Type'])), `no join of the page with the queue: ${description}`);
      const page = nodes.find((node) => node['Index Name'] === 'sandbox_reports_due');
      assert.ok(page && page['Parent Relationship'] !== 'Inner', `the page by due, once: ${description}`);
      const byKey = nodes.filter((node) => node['Index Name'] === 'sandbox_reports_pkey');
      assert.ok(byKey.length > 0 && byKey.every((node) => /id = ANY/.test(node['Index Cond'] ?? '')), `rows by key: ${description}`);
    });
  });
}
