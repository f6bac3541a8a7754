import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import type { RetentionConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { insertProject } from '../../src/db/projects.ts';
import { DAY_MS, finishPurge, renewPurgeLease, takePurgeLease } from '../../src/db/retention.ts';
import type { MessageStatus } from '../../src/db/tables.ts';
import { type IdPrefix, idLowerBound } from '../../src/domain/ids.ts';
import { uuid7LowerBound } from '../../src/domain/uuid7.ts';
import { purgeNow, totalPurged } from '../../src/workers/retention.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';
import { messageRowAt } from '../support/messageRows.ts';
import { storedDelivery, storedDeliveryId } from '../../src/db/deliveryIds.ts';

const HOUR = 3_600_000;

// Ids made at a given time (newId and newUuid7 never go back in time within a process).
let serial = 0;
function newId(prefix: IdPrefix, at: number): string {
  return idLowerBound(prefix, at) + String(++serial).padStart(16, '0');
}
function newUuid7(at: number): string {
  return `${uuid7LowerBound(at)}-7000-8000-${String(++serial).padStart(12, '0')}`;
}
const T0 = Date.UTC(2026, 0, 1); // a day start: the data's time
const RETENTION: Omit<RetentionConfig, 'intervalMs'> = {
  messagesMs: 10 * DAY_MS,
  webhookDeliveriesMs: 5 * DAY_MS,
  sandboxMs: 2 * DAY_MS,
  analyticsMs: 40 * DAY_MS,
  analyticsHourlyMs: 3 * DAY_MS,
  batchSize: 10,
};

/** A message made at `at` with its events, webhook deliveries (each with an attempt) and a sandbox submission. */
async function insertMessage(
  database: Database,
  projectId: string,
  at: number,
  options: { status?: MessageStatus; pendingDelivery?: boolean; batchId?: string; payload?: string } = {},
): Promise<string> {
  const { db } = database;
  const status = options.status ?? 'READ';
  const id = newId('msg', at);
  await db.insertInto('messages').values(messageRowAt(id, projectId, at, { status, ...(options.batchId !== undefined && { batchId: options.batchId }) })).execute();
  if (status === 'QUEUED') return id;
  for (const [i, event] of (['SENT', 'DELIVERED', 'READ'] as const).entries()) {
    const eventId = newId('evt', at + i);
    await db
      .insertInto('message_events')
      .values({ id: eventId, message_id: id, project_id: projectId, status: event, occurred_at: at + i, error: null, created_at: at + i })
      .execute();
    const deliveryId = newUuid7(at + i);
    const pending = options.pendingDelivery === true && i === 2;
    await db
      .insertInto('webhook_deliveries')
      .values(storedDelivery(db, {
        id: deliveryId,
        project_id: projectId,
        event_id: eventId,
        message_id: id,
        event: `message.${event.toLowerCase()}`,
        url: 'https://example.com/hook',
        endpoint_id: null,
        template_id: null,
        payload: options.payload ?? '{}',
        status: pending ? 'pending' : 'succeeded',
        attempt_count: 1,
        due_at: pending ? at + 365 * DAY_MS : null,
        lease_expires_at: null,
        created_at: at + i,
        updated_at: at + i + 1,
      }))
      .execute();
    await db
      .insertInto('webhook_attempts')
      .values({ id: newId('att', at + i), delivery_id: storedDeliveryId(db, deliveryId) as string, attempt: 1, at: at + i, url: 'https://example.com/hook', status_code: 200, duration_ms: 3, error: null, response_body: null })
      .execute();
  }
  await db
    .insertInto('sandbox_submissions')
    .values({ id: newId('att', at), message_id: id, provider_message_id: 'wamid.1', recipient: '+5511987654321', outcome: 'accepted', submitted_at: at })
    .execute();
  return id;
}

async function count(database: Database, table: 'messages' | 'message_events' | 'webhook_deliveries' | 'webhook_attempts' | 'sandbox_submissions' | 'batches' | 'message_counts'): Promise<number> {
  const row = await database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function ids(database: Database): Promise<string[]> {
  return (await database.db.selectFrom('messages').select('id').orderBy('id').execute()).map((row) => row.id);
}

for (const kind of databaseKinds()) {
  describe(`retention purge (${kind})`, () => {
    it('removes finished messages past retention with everything they own, in bounded steps; keeps young, queued and pending work', async () => {
      await withMigratedDatabase(kind, async (database) => {
        await insertProject(database.db, testProjectRow('proj_a'));
        const old: string[] = [];
        for (let i = 0; i < 25; i++) old.push(await insertMessage(database, 'proj_a', T0 + i * 1000));
        const queued = await insertMessage(database, 'proj_a', T0 + 30_000, { status: 'QUEUED' });
        const pending = await insertMessage(database, 'proj_a', T0 + 31_000, { pendingDelivery: true });
        const now = T0 + 20 * DAY_MS;
        const young = await insertMessage(database, 'proj_a', now - DAY_MS);

        const { steps } = await purgeNow(database, RETENTION, now);

        assert.deepEqual(await ids(database), [queued, pending, young].sort());
        const messageSteps = steps.filter((step) => step.pass === 'messages');
        for (const step of messageSteps) {
          assert.ok((step.deleted.messages ?? 0) <= RETENTION.batchSize, `a step removed ${step.deleted.messages} messages`);
          assert.ok(step.scanned <= RETENTION.batchSize);
        }
        assert.ok(messageSteps.length >= 3, 'the 25 old messages took several steps');
        const totals = totalPurged(steps);
        assert.equal(totals.messages, 25);
        assert.equal(totals.message_events, 75);
        assert.equal(totals.webhook_deliveries, 75 + 2); // the pending message's two finished deliveries age out (5 days)
        assert.equal(totals.webhook_attempts, 75 + 2);
        assert.equal(totals.sandbox_submissions, 26); // with their messages, and the pending one's (2 days)
        // What stays: the pending message's pending delivery; the young message's everything.
        assert.equal(await count(database, 'message_events'), 6);
        assert.equal(await count(database, 'webhook_deliveries'), 1 + 3);
        assert.equal(await count(database, 'webhook_attempts'), 1 + 3);
        for (const step of steps) {
          for (const [kindName, n] of Object.entries(step.deleted)) {
            if (kindName === 'message_events' || kindName === 'webhook_attempts' || kindName.startsWith('message_counts')) continue;
            if (kindName === 'webhook_deliveries' && step.pass === 'messages') continue; // three per message removed
            if (kindName === 'sandbox_submissions' && step.pass === 'messages') continue;
            assert.ok(n <= RETENTION.batchSize, `${step.pass}: ${n} ${kindName} in one step`);
          }
        }
      });
    });

    it('applies a project’s shorter retention to that project only', async () => {
      await withMigratedDatabase(kind, async (database) => {
        await insertProject(database.db, testProjectRow('proj_short', { message_retention_ms: 2 * DAY_MS }));
        await insertProject(database.db, testProjectRow('proj_default'));
        const now = T0 + 20 * DAY_MS;
        const shortOld = await insertMessage(database, 'proj_short', now - 3 * DAY_MS);
        const shortYoung = await insertMessage(database, 'proj_short', now - DAY_MS);
        const otherOld = await insertMessage(database, 'proj_default', now - 3 * DAY_MS);
        await purgeNow(database, RETENTION, now);
        const left = await ids(database);
        assert.ok(!left.includes(shortOld));
        assert.ok(left.includes(shortYoung));
        assert.ok(left.includes(otherOld));
        // The short project's deliveries went with its message; the other's stay (3 days < 5).
        const deliveries = await database.db.selectFrom('webhook_deliveries').select('project_id').execute();
        assert.equal(deliveries.filter((row) => row.project_id === 'proj_short').length, 3);
        assert.equal(deliveries.filter((row) => row.project_id === 'proj_default').length, 3);
      });
    });

    it('removes old batches only once their messages are gone', async () => {
      await withMigratedDatabase(kind, async (database) => {
        await insertProject(database.db, testProjectRow('proj_a'));
        const batch = (id: string) => ({ id, project_id: 'proj_a', template_name: 'order_update', language: 'en_US', total: 1, created_at: T0 });
        const emptied = newId('bat', T0);
        const holding = newId('bat', T0 + 1);
        await database.db.insertInto('batches').values([batch(emptied), batch(holding)]).execute();
        await insertMessage(database, 'proj_a', T0, { batchId: emptied });
        await insertMessage(database, 'proj_a', T0 + 2, { batchId: holding, status: 'QUEUED' });
        await purgeNow(database, RETENTION, T0 + 20 * DAY_MS);
        const left = await database.db.selectFrom('batches').select('id').execute();
        assert.deepEqual(
          left.map((row) => row.id),
          [holding],
        );
      });
    });

    it('rolls hourly counters of old days up into daily rows, totals unchanged, and drops those past analytics retention', async () => {
      await withMigratedDatabase(kind, async (database) => {
        await insertProject(database.db, testProjectRow('proj_a'));
        await insertProject(database.db, testProjectRow('proj_b'));
        const now = T0 + 45 * DAY_MS + 5 * HOUR;
        const rows = [];
        for (const project of ['proj_a', 'proj_b']) {
          // 44 days back to today, every 5th hour, two statuses and two templates.
          for (let hour = T0 + DAY_MS; hour < now; hour += 5 * HOUR) {
            for (const status of ['QUEUED', 'READ']) {
              for (const template of ['a', 'b']) {
                rows.push({ project_id: project, hour, status, template, language: 'en_US', count: (hour / HOUR) % 7 + 1 });
              }
            }
          }
        }
        for (let i = 0; i < rows.length; i += 200) await database.db.insertInto('message_counts').values(rows.slice(i, i + 200)).execute();
        const expireBefore = now - (now % DAY_MS) - RETENTION.analyticsMs;
        const rollUpTo = now - ((now - RETENTION.analyticsHourlyMs) % DAY_MS) - RETENTION.analyticsHourlyMs;
        const sumBy = async (where: (hour: number) => boolean) => {
          const all = await database.db.selectFrom('message_counts').selectAll().execute();
          const totals = new Map<string, number>();
          for (const row of all) {
            if (!where(Number(row.hour))) continue;
            const key = `${row.project_id} ${Number(row.hour) - (Number(row.hour) % DAY_MS)} ${row.status} ${row.template}`;
            totals.set(key, (totals.get(key) ?? 0) + Number(row.count));
          }
          return totals;
        };
        const kept = (hour: number) => hour >= expireBefore;
        const before = await sumBy(kept);
        const recentBefore = await database.db.selectFrom('message_counts').selectAll().where('hour', '>=', rollUpTo).orderBy('project_id').orderBy('hour').orderBy('status').orderBy('template').execute();
        const rowsBefore = await count(database, 'message_counts');

        const first = await purgeNow(database, RETENTION, now);
        assert.equal(first.countsRolledUpThrough, rollUpTo);

        assert.deepEqual(await sumBy(() => true), before, 'per day, status and template, the totals are the same');
        const recentAfter = await database.db.selectFrom('message_counts').selectAll().where('hour', '>=', rollUpTo).orderBy('project_id').orderBy('hour').orderBy('status').orderBy('template').execute();
        assert.deepEqual(recentAfter, recentBefore, 'recent hours stay hourly');
        const old = await database.db.selectFrom('message_counts').select('hour').where('hour', '<', rollUpTo).execute();
        assert.ok(old.length > 0);
        assert.ok(old.every((row) => Number(row.hour) % DAY_MS === 0), 'old rows are daily');
        assert.ok(old.every((row) => Number(row.hour) >= expireBefore), 'rows past analytics retention are gone');
        assert.ok((await count(database, 'message_counts')) < rowsBefore / 2);
        const steps = first.steps.filter((step) => step.pass === 'message_counts');
        for (const step of steps) assert.ok((step.deleted.message_counts_rolled_up ?? 0) <= RETENTION.batchSize);

        // A second run a day later reads only the day since and changes nothing already rolled up.
        const afterFirst = await sumBy(() => true);
        const second = await purgeNow(database, RETENTION, now + DAY_MS, first.countsRolledUpThrough);
        assert.equal(second.countsRolledUpThrough, rollUpTo + DAY_MS);
        const afterSecond = await sumBy((hour) => hour >= expireBefore + DAY_MS);
        for (const [key, value] of afterSecond) assert.equal(value, afterFirst.get(key), key);
      });
    });

    it('is run by one process at a time (the lease)', async () => {
      await withMigratedDatabase(kind, async (database) => {
        const now = T0;
        assert.equal(await takePurgeLease(database.db, 'w1', now, 60_000), 0);
        assert.equal(await takePurgeLease(database.db, 'w2', now + 1000, 60_000), undefined);
        assert.equal(await renewPurgeLease(database.db, 'w1', now + 2000, 60_000), true);
        await finishPurge(database.db, 'w1', now + HOUR, 123);
        assert.equal(await takePurgeLease(database.db, 'w2', now + 3000, 60_000), undefined, 'the next run is not due yet');
        assert.equal(await takePurgeLease(database.db, 'w2', now + HOUR, 60_000), 123);
        // A holder that died: its lease runs out and another takes over.
        assert.equal(await takePurgeLease(database.db, 'w3', now + HOUR + 30_000, 60_000), undefined);
        assert.equal(await takePurgeLease(database.db, 'w3', now + HOUR + 61_000, 60_000), 123);
        assert.equal(await renewPurgeLease(database.db, 'w2', now + HOUR + 62_000, 60_000), false);
      });
    });

    if (kind === 'sqlite') {
      it('gives the freed pages back: the file shrinks (incremental vacuum)', async () => {
        await withMigratedDatabase(kind, async (database) => {
          const pragma = async (name: string) => Number(Object.values((await sql.raw(`pragma ${name}`).execute(database.db)).rows[0] as object)[0]);
          assert.equal(await pragma('auto_vacuum'), 2, 'a new file is made with incremental auto-vacuum');
          await insertProject(database.db, testProjectRow('proj_a'));
          const payload = JSON.stringify({ text: 'x'.repeat(8000) });
          for (let i = 0; i < 80; i++) await insertMessage(database, 'proj_a', T0 + i * 1000, { payload });
          const pagesBefore = await pragma('page_count');
          await purgeNow(database, { ...RETENTION, batchSize: 20 }, T0 + 20 * DAY_MS);
          assert.equal(await count(database, 'messages'), 0);
          const pagesAfter = await pragma('page_count');
          assert.equal(await pragma('freelist_count'), 0);
          assert.ok(pagesAfter < pagesBefore / 4, `page_count ${pagesBefore} → ${pagesAfter}`);
        });
      });
    }
  });
}
