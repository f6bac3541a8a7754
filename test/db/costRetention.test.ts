import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RetentionConfig } from '../../src/config.ts';
import { insertProject } from '../../src/db/projects.ts';
import { DAY_MS } from '../../src/db/retention.ts';
import { purgeNow, totalPurged } from '../../src/workers/retention.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';

// Cost counters and reconciliations live as long as the analytics counters
// (SVC_RETENTION_ANALYTICS), then go with the purge, a bounded number per step.

const RETENTION: Omit<RetentionConfig, 'intervalMs'> = {
  messagesMs: 10 * DAY_MS,
  webhookDeliveriesMs: 10 * DAY_MS,
  sandboxMs: 10 * DAY_MS,
  analyticsMs: 30 * DAY_MS,
  analyticsHourlyMs: 5 * DAY_MS,
  batchSize: 7,
};
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

for (const kind of databaseKinds()) {
  describe(`cost counters' retention (${kind})`, () => {
    it('removes the days past the analytics retention, for every project, and keeps the rest', async () => {
      await withMigratedDatabase(kind, async (database) => {
        const now = T0 + 60 * DAY_MS + 3_600_000;
        for (const project of ['proj_a', 'proj_b']) {
          await insertProject(database.db, testProjectRow(project));
          for (let day = T0; day < now; day += DAY_MS) {
            for (const template of ['a', 'b']) {
              await database.db
                .insertInto('message_costs')
                .values({ project_id: project, day, template, category: 'marketing', country: 'BR', market: 'Brazil', currency: 'USD', charged: 1, amount_micros: 62_500, free: 0, unpriced: 0 })
                .execute();
            }
            await database.db
              .insertInto('cost_reconciliations')
              .values({ project_id: project, day, checked_at: day, currency: 'USD', meta_messages: 2, meta_amount_micros: 125_000, svc_messages: 2, svc_amount_micros: 125_000, differences: '[]' })
              .execute();
          }
        }
        const { steps } = await purgeNow(database, RETENTION, now);
        const cutoff = now - (now % DAY_MS) - RETENTION.analyticsMs;
        for (const table of ['message_costs', 'cost_reconciliations'] as const) {
          const days = (await database.db.selectFrom(table).select(['project_id', 'day']).execute()).map((row) => Number(row.day));
          assert.ok(days.length > 0, `${table}: recent days kept`);
          assert.ok(days.every((day) => day >= cutoff), `${table}: nothing before the cutoff`);
        }
        // 30 days before the cutoff, two projects: 2 × 2 × 30 counter rows and 2 × 30 reconciliations.
        assert.equal(totalPurged(steps).message_costs, 2 * 2 * 30 + 2 * 30);
        const kept = await database.db.selectFrom('message_costs').select('day').where('project_id', '=', 'proj_a').execute();
        assert.equal(kept.length, 2 * 31, 'the last 31 days of each template');
      });
    });
  });
}
