import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { nextDueAt } from '../../src/db/claims.ts';
import { databaseKinds, withMigratedDatabase } from '../support/databases.ts';

// nextDueAt: when a worker's next row can be claimed — a free row's due time, or the end of a
// lease held past its due time — answered from indexes, as it runs after every batch.

for (const kind of databaseKinds()) {
  describe(`nextDueAt (${kind})`, () => {
    it('is the earliest time a row can be claimed, free or leased, and undefined when none is due', async () => {
      await withMigratedDatabase(kind, async (database) => {
        const { db } = database;
        assert.equal(await nextDueAt(db, 'sandbox_reports'), undefined);
        const report = (id: string, due_at: number, lease_expires_at: number | null) => ({
          id,
          message_id: 'msg_x',
          provider_message_id: 'wamid.x',
          status: 'DELIVERED' as const,
          error: null,
          due_at,
          lease_expires_at,
        });
        // Many rows, some leased past their due time, some with leases already over.
        let seed = 7;
        const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
        const rows = Array.from({ length: 400 }, (_, i) => {
          const due = 10_000 + Math.floor(random() * 100_000);
          const leased = random() < 0.3;
          return report(`r${i}`, due, leased ? due + Math.floor((random() - 0.2) * 50_000) : null);
        });
        for (let i = 0; i < rows.length; i += 100) await db.insertInto('sandbox_reports').values(rows.slice(i, i + 100)).execute();
        const definition = (all: typeof rows) =>
          Math.min(...all.map((row) => (row.lease_expires_at !== null && row.lease_expires_at > row.due_at ? row.lease_expires_at : row.due_at)));
        assert.equal(await nextDueAt(db, 'sandbox_reports'), definition(rows));

        // The earliest row leased far past its due time: the next time is the next free row's, or its lease end.
        const earliest = rows.reduce((a, b) => (a.due_at <= b.due_at ? a : b));
        await db.updateTable('sandbox_reports').set({ lease_expires_at: earliest.due_at + 1_000_000 }).where('id', '=', earliest.id).execute();
        earliest.lease_expires_at = earliest.due_at + 1_000_000;
        assert.equal(await nextDueAt(db, 'sandbox_reports'), definition(rows));

        // Only leased rows left: the earliest lease end.
        await db.deleteFrom('sandbox_reports').where('id', '!=', earliest.id).execute();
        assert.equal(await nextDueAt(db, 'sandbox_reports'), earliest.due_at + 1_000_000);

        if (kind === 'sqlite') {
          // Answered by index seeks, never a scan of the table.
          const plan = await sql<{ detail: string }>`explain query plan
            select
              (select due_at from sandbox_reports where due_at is not null and (lease_expires_at is null or lease_expires_at <= due_at)
               order by due_at limit 1) as free,
              (select min(lease_expires_at) from sandbox_reports where lease_expires_at is not null and due_at is not null
               and lease_expires_at > due_at) as leased`.execute(db);
          const details = plan.rows.map((row) => row.detail);
          assert.ok(!details.some((detail) => /^SCAN sandbox_reports$/.test(detail)), details.join('\n'));
        }
      });
    });
  });
}
