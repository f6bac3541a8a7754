import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RetentionConfig } from '../../src/config.ts';
import { insertProject } from '../../src/db/projects.ts';
import { deleteStaleLinks, linkedIdentities, linkIdentities, MAX_LINKED, withLinkedIdentities } from '../../src/db/recipientLinks.ts';
import { DAY_MS } from '../../src/db/retention.ts';
import { purgeNow, totalPurged } from '../../src/workers/retention.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';

// A WhatsApp user's identities joined per project (a phone, its BSUIDs, an old BSUID and its new
// one): whole groups, one hop from any member, capped; kept as long as messages after last seen.

const T0 = Date.UTC(2026, 0, 1);
const RETENTION: Omit<RetentionConfig, 'intervalMs'> = {
  messagesMs: 10 * DAY_MS,
  webhookDeliveriesMs: 5 * DAY_MS,
  sandboxMs: 2 * DAY_MS,
  analyticsMs: 40 * DAY_MS,
  analyticsHourlyMs: 3 * DAY_MS,
  batchSize: 10,
};

for (const kind of databaseKinds()) {
  describe(`recipient links (${kind})`, () => {
    it('joins whole groups: any member finds every other in one lookup, per project', async () => {
      await withMigratedDatabase(kind, async ({ db }) => {
        await linkIdentities(db, 'proj_a', '+5511987654321', 'BR.old1', 'status', T0);
        await linkIdentities(db, 'proj_a', 'BR.old1', 'BR.new1', 'user_changed_user_id', T0 + 1);
        const group = ['+5511987654321', 'BR.new1', 'BR.old1'];
        for (const member of group) assert.deepEqual((await withLinkedIdentities(db, 'proj_a', [member])).sort(), group);
        assert.deepEqual(await withLinkedIdentities(db, 'proj_b', ['BR.new1']), ['BR.new1'], 'another project knows nothing');
        // Again: nothing doubles, the pair is only seen later.
        assert.equal(await linkIdentities(db, 'proj_a', 'BR.new1', '+5511987654321', 'inbound', T0 + 5), true);
        assert.equal((await linkedIdentities(db, 'proj_a', ['BR.new1'])).get('BR.new1')!.length, 2);
        const seen = await db.selectFrom('recipient_links').select(['seen_at', 'created_at']).where('identity', '=', 'BR.new1').where('linked', '=', '+5511987654321').executeTakeFirstOrThrow();
        assert.equal(Number(seen.seen_at), T0 + 5);
        assert.equal(Number(seen.created_at), T0 + 1);
      });
    });

    it('joins no group beyond the cap', async () => {
      await withMigratedDatabase(kind, async ({ db }) => {
        for (let i = 1; i < MAX_LINKED; i++) assert.equal(await linkIdentities(db, 'proj_a', 'US.0', `US.${i}`, 'status', T0), true);
        assert.equal(await linkIdentities(db, 'proj_a', 'US.0', 'US.999', 'status', T0), false);
        assert.equal((await withLinkedIdentities(db, 'proj_a', ['US.0'])).length, MAX_LINKED);
        assert.deepEqual(await withLinkedIdentities(db, 'proj_a', ['US.999']), ['US.999']);
      });
    });

    it('the retention purge removes links last seen before the messages’ retention, project by project', async () => {
      await withMigratedDatabase(kind, async (database) => {
        const { db } = database;
        for (const id of ['proj_a', 'proj_b']) await insertProject(db, testProjectRow(id));
        const now = T0 + 30 * DAY_MS;
        // 15 old pairs in proj_a (more than a batch of 10), one recent; one old pair in proj_b.
        for (let i = 0; i < 15; i++) await linkIdentities(db, 'proj_a', `+55119876540${String(i).padStart(2, '0')}`, `BR.x${i}`, 'status', T0 + i);
        await linkIdentities(db, 'proj_a', '+5511987654999', 'BR.recent', 'status', now - DAY_MS);
        await linkIdentities(db, 'proj_b', '+5511987654000', 'BR.b', 'status', T0);
        const { steps } = await purgeNow(database, RETENTION, now);
        assert.equal(totalPurged(steps).recipient_links, 32);
        const left = await db.selectFrom('recipient_links').select(['project_id', 'identity']).execute();
        assert.deepEqual(left.map((row) => row.identity).sort(), ['+5511987654999', 'BR.recent']);
        assert.ok(steps.filter((step) => step.pass === 'recipient_links').every((step) => step.scanned <= 12), 'in bounded steps');
      });
    });

    it('deleteStaleLinks takes about a batch at a time, oldest first', async () => {
      await withMigratedDatabase(kind, async ({ db }) => {
        for (let i = 0; i < 6; i++) await linkIdentities(db, 'proj_a', `US.a${i}`, `US.b${i}`, 'status', T0 + i);
        assert.equal(await deleteStaleLinks(db, 'proj_a', T0 + 100, 4), 4);
        const left = (await db.selectFrom('recipient_links').select('identity').execute()).map((row) => row.identity).sort();
        assert.deepEqual(left, ['US.a2', 'US.a3', 'US.a4', 'US.a5', 'US.b2', 'US.b3', 'US.b4', 'US.b5']);
        assert.equal(await deleteStaleLinks(db, 'proj_a', T0 + 3, 100), 2, 'only those before the cutoff');
      });
    });
  });
}
