import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import type { RetentionConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { dropPeriod, type Family, FAMILIES, makePeriodsAhead, partitionsOf, periodFor, periodsEndedBefore } from '../../src/db/partitions.ts';
import { insertProject } from '../../src/db/projects.ts';
import { DAY_MS } from '../../src/db/retention.ts';
import type { MessageStatus } from '../../src/db/tables.ts';
import { idLowerBound } from '../../src/domain/ids.ts';
import { uuid7LowerBound } from '../../src/domain/uuid7.ts';
import { purgeNow, totalPurged } from '../../src/workers/retention.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';
import { messageRowAt } from '../support/messageRows.ts';

// PostgreSQL's time partitions (migration 0028, db/partitions.ts): periods made ahead, rows in
// their period's partition, a period past retention dropped whole with its children, a period
// holding anything to keep left to the batched purge. Times are those of the ids: the periods
// are made by the wall clock, so the rows here are made in the days ahead of it.

const [MESSAGES] = FAMILIES as [Family, Family];
const RETENTION: Omit<RetentionConfig, 'intervalMs'> = {
  messagesMs: 4 * DAY_MS, // periods of a day
  webhookDeliveriesMs: 4 * DAY_MS,
  sandboxMs: 2 * DAY_MS,
  analyticsMs: 40 * DAY_MS,
  analyticsHourlyMs: 3 * DAY_MS,
  batchSize: 10,
};
const PERIOD = periodFor(RETENTION.messagesMs);
/** The start of the first period made ahead: the migration's first partition ends at the next UTC midnight. */
const tomorrow = () => (Math.floor(Date.now() / DAY_MS) + 1) * DAY_MS;

let serial = 0;
const messageId = (at: number) => idLowerBound('msg', at) + String(++serial).padStart(16, '0');
const eventId = (at: number) => idLowerBound('evt', at) + String(++serial).padStart(16, '0');
const deliveryId = (at: number) => `${uuid7LowerBound(at)}-7000-8000-${String(++serial).padStart(12, '0')}`;

/** A message accepted at `at`, with two status events, a delivery with an attempt, and a reply. */
async function insertMessage(
  database: Database,
  at: number,
  options: { status?: MessageStatus; updatedAt?: number; pendingDelivery?: boolean } = {},
): Promise<{ id: string; delivery: string }> {
  const { db } = database;
  const status = options.status ?? 'READ';
  const id = messageId(at);
  await db.insertInto('messages').values(messageRowAt(id, 'proj_a', at, { status, ...(options.updatedAt !== undefined && { updatedAt: options.updatedAt }) })).execute();
  for (const [i, event] of (['SENT', 'READ'] as const).entries()) {
    await db
      .insertInto('message_events')
      .values({ id: eventId(at + i), message_id: id, project_id: 'proj_a', status: event, occurred_at: at + i, error: null, created_at: at + i })
      .execute();
  }
  const delivery = await insertDelivery(database, at + 2, id, { pending: options.pendingDelivery === true });
  await db
    .insertInto('webhook_attempts')
    .values({ id: idLowerBound('att', at) + String(++serial).padStart(16, '0'), delivery_id: delivery, attempt: 1, at: at + 2, url: 'https://example.com/hook', status_code: 200, duration_ms: 3, error: null, response_body: null })
    .execute();
  await db
    .insertInto('message_replies')
    .values({ id: eventId(at + 4), project_id: 'proj_a', message_id: id, provider_reply_id: `wamid.${serial}`, type: 'text', text: 'ok', payload: null, occurred_at: at + 4, created_at: at + 4 })
    .execute();
  return { id, delivery };
}

/** A webhook delivery made at `at` about a message: delivered, or pending (due a year later). */
async function insertDelivery(database: Database, at: number, messageId: string, options: { pending: boolean }): Promise<string> {
  const id = deliveryId(at);
  await database.db
    .insertInto('webhook_deliveries')
    .values({
      id,
      project_id: 'proj_a',
      event_id: eventId(at),
      message_id: messageId,
      event: 'message.read',
      url: 'https://example.com/hook',
      endpoint_id: null,
      template_id: null,
      payload: '{}',
      status: options.pending ? 'pending' : 'succeeded',
      attempt_count: 1,
      due_at: options.pending ? at + 365 * DAY_MS : null,
      lease_expires_at: null,
      created_at: at,
      updated_at: at + 1,
    })
    .execute();
  return id;
}

/** The partition a row of `table` is stored in. */
async function partitionOf(database: Database, table: string, column: string, key: string): Promise<string> {
  const row = await sql<{ partition: string }>`select tableoid::regclass::text as partition from ${sql.table(table)} where ${sql.id(column)} = ${key}`.execute(database.db);
  return row.rows[0]!.partition;
}

async function exists(database: Database, table: string): Promise<boolean> {
  return (await sql<{ found: string | null }>`select to_regclass(${table})::text as found`.execute(database.db)).rows[0]!.found !== null;
}

async function stored(database: Database, table: 'messages' | 'message_events' | 'message_replies', column: 'id' | 'message_id', id: string): Promise<number> {
  return (await database.db.selectFrom(table).select(column).where(column, '=', id).execute()).length;
}

/** The periods of tomorrow and the day after (a purge's run makes one ahead of the clock). */
async function makeTwoPeriods(database: Database): Promise<void> {
  for (const family of FAMILIES) await makePeriodsAhead(database.db, family, Date.now() + PERIOD, PERIOD);
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');

for (const kind of databaseKinds().filter((k) => k === 'postgres')) {
  describe('time partitions (postgres)', () => {
    it('makes each family’s periods a period ahead of the clock, the table’s and its children’s with the same bounds, once', async () => {
      await withMigratedDatabase(kind, async (database) => {
        for (const family of FAMILIES) {
          const first = tomorrow();
          const made = await makePeriodsAhead(database.db, family, Date.now(), PERIOD);
          assert.ok(made.includes(`${family.lead.table}_${day(first)}`) && made.includes(`${family.child.table}_${day(first)}`), made.join(', '));
          assert.deepEqual(await makePeriodsAhead(database.db, family, Date.now(), PERIOD), [], 'nothing to make the second time');
          const lead = await partitionsOf(database.db, family.lead.table);
          const child = await partitionsOf(database.db, family.child.table);
          const ranges = (partitions: typeof lead) => partitions.map((p) => `${p.isDefault ? 'default' : `${p.from ?? 'min'}..${p.to}`}`);
          assert.deepEqual(ranges(child), ranges(lead));
          assert.ok(lead.filter((p) => !p.isDefault).at(-1)!.to! >= family.bound(Date.now() + PERIOD));
          // Contiguous from the migration's first partition on: no key of the coming days falls to the default.
          const periods = lead.filter((p) => !p.isDefault);
          for (let i = 1; i < periods.length; i++) assert.equal(periods[i]!.from, periods[i - 1]!.to);
        }
      });
    });

    it('stores a row in its period’s partition, and a key no period covers yet in the default one, until its period is made', async () => {
      await withMigratedDatabase(kind, async (database) => {
        await insertProject(database.db, testProjectRow('proj_a'));
        await makeTwoPeriods(database);
        const soon = await insertMessage(database, tomorrow() + 3_600_000);
        assert.equal(await partitionOf(database, 'messages', 'id', soon.id), `messages_${day(tomorrow())}`);
        assert.equal(await partitionOf(database, 'message_events', 'message_id', soon.id), `message_events_${day(tomorrow())}`);
        assert.equal(await partitionOf(database, 'webhook_deliveries', 'id', soon.delivery), `webhook_deliveries_${day(tomorrow())}`);
        assert.equal(await partitionOf(database, 'webhook_attempts', 'delivery_id', soon.delivery), `webhook_attempts_${day(tomorrow())}`);

        // A clock far ahead (or periods not made in time): the row is kept, in the default partition.
        const far = tomorrow() + 20 * DAY_MS + 3_600_000;
        const stray = await insertMessage(database, far);
        assert.equal(await partitionOf(database, 'messages', 'id', stray.id), 'messages_default');
        // When the periods reach it, it moves into its period, with its events; the periods stay contiguous.
        await makePeriodsAhead(database.db, MESSAGES, far, PERIOD);
        assert.equal(await partitionOf(database, 'messages', 'id', stray.id), `messages_${day(far)}`);
        assert.equal(await partitionOf(database, 'message_events', 'message_id', stray.id), `message_events_${day(far)}`);
        assert.equal(await stored(database, 'message_events', 'message_id', stray.id), 2);
        const periods = (await partitionsOf(database.db, 'messages')).filter((p) => !p.isDefault);
        for (let i = 1; i < periods.length; i++) assert.equal(periods[i]!.from, periods[i - 1]!.to);
        const after = await insertMessage(database, far + 60_000);
        assert.equal(await partitionOf(database, 'messages', 'id', after.id), `messages_${day(far)}`);
      });
    });

    it('drops a period past retention whole — messages, events, replies; deliveries, attempts — and leaves the others', async () => {
      await withMigratedDatabase(kind, async (database) => {
        await insertProject(database.db, testProjectRow('proj_a'));
        const first = tomorrow();
        await makeTwoPeriods(database);
        const old = [await insertMessage(database, first + 1_000), await insertMessage(database, first + 2_000)];
        // In the next period, and accepted after the cutoff: kept, with its period.
        const young = await insertMessage(database, first + PERIOD + 7_200_000);

        // The first period ended RETENTION ago, plus an hour; the second not yet.
        const { steps } = await purgeNow(database, RETENTION, first + PERIOD + RETENTION.messagesMs + 3_600_000);

        const dropped = steps.filter((step) => step.pass === 'partitions');
        assert.deepEqual(totalPurged(dropped), { messages: 2, message_events: 4, webhook_deliveries: 2, webhook_attempts: 2 });
        for (const table of ['messages', 'message_events', 'webhook_deliveries', 'webhook_attempts']) {
          assert.equal(await exists(database, `${table}_${day(first)}`), false, `${table}_${day(first)} dropped`);
          assert.equal(await exists(database, `${table}_${day(first + PERIOD)}`), true, `${table}_${day(first + PERIOD)} kept`);
        }
        // The migration's first partition ended before the cutoff too, and held nothing: dropped.
        assert.equal(await exists(database, 'messages_before'), false);
        for (const { id } of old) {
          assert.equal(await stored(database, 'messages', 'id', id), 0);
          assert.equal(await stored(database, 'message_events', 'message_id', id), 0);
          assert.equal(await stored(database, 'message_replies', 'message_id', id), 0);
        }
        assert.equal(await stored(database, 'messages', 'id', young.id), 1);
        assert.equal(await stored(database, 'message_events', 'message_id', young.id), 2);
        assert.equal(await stored(database, 'message_replies', 'message_id', young.id), 1);
        // Nothing was left for the batched purge of messages.
        assert.equal(totalPurged(steps.filter((step) => step.pass === 'messages')).messages ?? 0, 0);
      });
    });

    it('leaves the rows of a period not yet ended to its drop, a period later at most; a project’s shorter retention purges them in batches', async () => {
      await withMigratedDatabase(kind, async (database) => {
        await insertProject(database.db, testProjectRow('proj_a'));
        const first = tomorrow();
        await makeTwoPeriods(database);
        const message = await insertMessage(database, first + 1_000);
        // Past the operator's retention, but its period (the first day) has not ended at the cutoff.
        const now = first + RETENTION.messagesMs + 12 * 3_600_000;
        const { steps } = await purgeNow(database, RETENTION, now);
        assert.equal(await stored(database, 'messages', 'id', message.id), 1, 'kept for its period’s drop');
        assert.equal(totalPurged(steps).messages ?? 0, 0);

        await database.db.updateTable('projects').set({ message_retention_ms: 2 * DAY_MS }).where('id', '=', 'proj_a').execute();
        const own = await purgeNow(database, RETENTION, now);
        assert.equal(await stored(database, 'messages', 'id', message.id), 0, 'the project’s own retention, in batches');
        assert.equal(totalPurged(own.steps.filter((step) => step.pass === 'messages')).messages, 1);
        assert.equal(await exists(database, `messages_${day(first)}`), true, 'the period itself stays until it ends');
      });
    });

    for (const [what, options] of [
      ['a message still QUEUED', { status: 'QUEUED' }],
      ['a message changed after the cutoff', { updatedAt: 'late' }],
      ['a message with a delivery pending', { pendingDelivery: true }],
    ] as const) {
      it(`keeps a period holding ${what}: the batched purge takes its finished rows, and the period goes once it is empty of work`, async () => {
        await withMigratedDatabase(kind, async (database) => {
          await insertProject(database.db, testProjectRow('proj_a'));
          const first = tomorrow();
          await makeTwoPeriods(database);
          const now = first + PERIOD + RETENTION.messagesMs + 3_600_000;
          const finished = await insertMessage(database, first + 1_000);
          const kept = await insertMessage(database, first + 2_000, {
            ...('status' in options && { status: options.status }),
            ...('updatedAt' in options && { updatedAt: now - 1_000 }),
            ...('pendingDelivery' in options && { pendingDelivery: true }),
          });

          const { steps } = await purgeNow(database, RETENTION, now);

          assert.equal(await exists(database, `messages_${day(first)}`), true);
          assert.equal(await exists(database, `message_events_${day(first)}`), true);
          assert.equal(totalPurged(steps.filter((step) => step.pass === 'partitions')).messages ?? 0, 0);
          assert.equal(await stored(database, 'messages', 'id', finished.id), 0, 'the finished message, by the batched purge');
          assert.equal(await stored(database, 'message_events', 'message_id', finished.id), 0);
          assert.equal(await stored(database, 'messages', 'id', kept.id), 1);
          assert.equal(await stored(database, 'message_events', 'message_id', kept.id), 2);
        });
      });
    }

    it('leaves a period whose table is busy past the lock timeout for the next run, and drops it then', async () => {
      await withMigratedDatabase(
        kind,
        async (database) => {
          await insertProject(database.db, testProjectRow('proj_a'));
          const first = tomorrow();
          await makeTwoPeriods(database);
          const old = await insertMessage(database, first + 1_000);
          const now = first + PERIOD + RETENTION.messagesMs + 3_600_000;
          // A reader in the middle of a transaction holds the period's partition (a long report, say).
          const reader = await database.pool!.connect();
          try {
            await reader.query('begin');
            await reader.query(`select count(*) from messages_${day(first)}`);
            const { steps } = await purgeNow(database, RETENTION, now);
            assert.equal(await exists(database, `messages_${day(first)}`), true, 'not dropped while held');
            assert.equal(totalPurged(steps.filter((step) => step.pass === 'partitions')).messages ?? 0, 0);
            // The batched purge then found the rows, and could not take them either (the reader
            // does not block deletes: they went).
            assert.equal(await stored(database, 'messages', 'id', old.id), 0);
          } finally {
            await reader.query('rollback');
            reader.release();
          }
          await purgeNow(database, RETENTION, now);
          assert.equal(await exists(database, `messages_${day(first)}`), false, 'dropped by the next run');
        },
        { poolSize: 3 },
      );
    });

    for (const [what, family, write] of [
      ['a late status report queues a webhook about one of its messages', 'messages', 'pending delivery'],
      ['one of its deliveries is sent again', 'webhook_deliveries', 'due delivery'],
    ] as const) {
      it(`does not drop a period when, between its read and its drop, ${what}`, async () => {
        await withMigratedDatabase(kind, async (database) => {
          await insertProject(database.db, testProjectRow('proj_a'));
          const first = tomorrow();
          await makeTwoPeriods(database);
          const message = await insertMessage(database, first + 1_000);
          const cutoff = first + PERIOD + 3_600_000;
          const target = FAMILIES.find((f) => f.name === family)!;
          const [period] = await periodsEndedBefore(database.db, target, cutoff).then((periods) => periods.filter((p) => p.from !== undefined));
          const racing = async () => {
            if (write === 'pending delivery') {
              // The report's webhook is made now, in the current period of deliveries.
              await insertDelivery(database, Date.now(), message.id, { pending: true });
            } else {
              await database.db.updateTable('webhook_deliveries').set({ due_at: cutoff + 1, status: 'pending' }).where('project_id', '=', 'proj_a').where('id', '=', message.delivery).execute();
            }
          };
          assert.equal(await dropPeriod(database.db, target, period!, cutoff, racing), undefined);
          assert.equal(await exists(database, period!.name), true);
          // Without the race, the same call drops it (the write undone).
          await database.db.deleteFrom('webhook_deliveries').where('due_at', 'is not', null).execute();
          assert.notEqual(await dropPeriod(database.db, target, period!, cutoff), undefined);
          assert.equal(await exists(database, period!.name), false);
        });
      });
    }

    it('keeps a deliveries period holding a delivery still pending, and drops it once none is', async () => {
      await withMigratedDatabase(kind, async (database) => {
        await insertProject(database.db, testProjectRow('proj_a'));
        const first = tomorrow();
        await makeTwoPeriods(database);
        const message = await insertMessage(database, first + 1_000, { pendingDelivery: true });
        const now = first + PERIOD + RETENTION.webhookDeliveriesMs + 3_600_000;
        await purgeNow(database, RETENTION, now);
        assert.equal(await exists(database, `webhook_deliveries_${day(first)}`), true);
        assert.equal(await exists(database, `webhook_attempts_${day(first)}`), true);

        await database.db.updateTable('webhook_deliveries').set({ due_at: null, status: 'succeeded', updated_at: first + 5_000 }).where('project_id', '=', 'proj_a').where('id', '=', message.delivery).execute();
        const { steps } = await purgeNow(database, RETENTION, now);
        assert.equal(await exists(database, `webhook_deliveries_${day(first)}`), false);
        assert.equal(await exists(database, `webhook_attempts_${day(first)}`), false);
        assert.equal(await exists(database, `messages_${day(first)}`), false, 'and then the message’s period, which it held');
        assert.deepEqual(totalPurged(steps.filter((step) => step.pass === 'partitions')), { messages: 1, message_events: 2, webhook_deliveries: 1, webhook_attempts: 1 });
      });
    });
  });
}
