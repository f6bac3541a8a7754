import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { type Db, openDatabase } from '../../src/db/database.ts';
import { storedDelivery, storedDeliveryId } from '../../src/db/deliveryIds.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { purgeDeliveriesStep } from '../../src/db/retention.ts';
import {
  findWebhookDelivery,
  listDeliveriesForMessage,
  listWebhookDeliveries,
  recordWebhookAttempts,
  requestWebhookRetry,
  type WebhookDeliveryRow,
} from '../../src/db/webhookDeliveries.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';
import { migrateThrough } from '../support/migrateThrough.ts';

// Bytes per message (issue 19, migration 0027): SQLite stores a delivery's id, message id and
// event id as 16 bytes each (and created_at only when its id does not carry it). Rows written
// before read back exactly as the same rows written after it, through every read of the log,
// with a database holding rows of every shape: canonical ids, ids of another kind (tse_…), ids that
// are not canonical (kept as text), a created_at its id does not carry, attempts kept apart.

const PROJECT = 'proj_01jdtest0000000000000000aa';
const OTHER = 'proj_01jdtest0000000000000000bb';
const MESSAGE = 'msg_01jdtest0000000000000000aa';
const URL = 'https://hooks.example.com/svc';
const T = 1_764_150_000_000; // 0x019ac... : the time the ids below carry
const uuidAt = (ms: number, tail: string) => {
  const hex = ms.toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-${tail}`;
};

const DELIVERIES: WebhookDeliveryRow[] = [
  {
    id: uuidAt(T + 1, '000000000001'), project_id: PROJECT, event_id: 'evt_01jdtest0000000000000000a1', message_id: MESSAGE,
    event: 'message.sent', url: URL, endpoint_id: null, template_id: null, payload: '', status: 'succeeded', attempt_count: 1,
    due_at: null, lease_expires_at: null, created_at: T + 1, updated_at: T + 1_100,
    last_attempt_at: T + 1_050, last_status_code: 204, last_duration_ms: 12, last_error: null, last_response_body: '',
  },
  // Retried: its earlier attempts in webhook_attempts; a created_at its id does not carry.
  {
    id: uuidAt(T + 2, '000000000002'), project_id: PROJECT, event_id: 'evt_01jdtest0000000000000000a2', message_id: MESSAGE,
    event: 'message.delivered', url: URL, endpoint_id: 'we_01jdtest0000000000000000a1', template_id: null, payload: '{"stored":true}',
    status: 'failed', attempt_count: 3, due_at: null, lease_expires_at: null, created_at: T - 5, updated_at: T + 2_100,
    last_attempt_at: T + 2_050, last_status_code: 500, last_duration_ms: 7, last_error: 'HTTP 500', last_response_body: 'no',
  },
  // A template event (tse_…, kept as text), pending.
  {
    id: uuidAt(T + 3, '000000000003'), project_id: PROJECT, event_id: 'tse_01jdtest0000000000000000a3', message_id: null,
    event: 'template.status_changed', url: URL, endpoint_id: 'we_01jdtest0000000000000000a1', template_id: 'tpl_01jdtest0000000000000000a1',
    payload: '{"event":"template.status_changed"}', status: 'pending', attempt_count: 0, due_at: T + 3_000, lease_expires_at: null,
    created_at: T + 3, updated_at: T + 3,
  },
  // Not canonical (capitals): kept as text, found by exactly that text as before.
  {
    id: 'whd_NOT_A_UUID', project_id: OTHER, event_id: 'EVT_01JDTEST0000000000000000B1', message_id: 'msg_short',
    event: 'test', url: URL, endpoint_id: null, template_id: null, payload: '{"event":"test"}', status: 'succeeded', attempt_count: 1,
    due_at: null, lease_expires_at: null, created_at: T + 4, updated_at: T + 4_100,
    last_attempt_at: T + 4_050, last_status_code: 200, last_duration_ms: 3, last_error: null, last_response_body: 'ok',
  },
  {
    id: uuidAt(T + 5, '000000000005'), project_id: OTHER, event_id: 'evt_01jdtest0000000000000000b2', message_id: null,
    event: 'test', url: URL, endpoint_id: null, template_id: null, payload: '{"event":"test"}', status: 'succeeded', attempt_count: 1,
    due_at: null, lease_expires_at: null, created_at: T + 5, updated_at: T + 5_100,
    last_attempt_at: T + 5_050, last_status_code: 200, last_duration_ms: 3, last_error: null, last_response_body: 'ok',
  },
];
const ATTEMPTS = [1, 2].map((attempt) => ({
  id: `att_01jdtest0000000000000000a${attempt}`, delivery_id: DELIVERIES[1]!.id, attempt, at: T + 2_000 + attempt,
  url: URL, status_code: 500, duration_ms: 7, error: 'HTTP 500', response_body: 'no',
}));

async function seed(db: Db, encode: boolean): Promise<void> {
  for (const project of [PROJECT, OTHER]) {
    await sql`insert into projects (id, name, owner_email, webhook_secret_enc, created_at, updated_at)
      values (${project}, 'p', 'o@example.com', 'sealed', 1, 1)`.execute(db);
  }
  for (const delivery of DELIVERIES) {
    await db.insertInto('webhook_deliveries').values(encode ? storedDelivery(db, delivery) : delivery).execute();
  }
  await db
    .insertInto('webhook_attempts')
    .values(ATTEMPTS.map((attempt) => (encode ? { ...attempt, delivery_id: storedDeliveryId(db, attempt.delivery_id) as string } : attempt)))
    .execute();
}

const reads = async (db: Db) => ({
  one: await Promise.all(DELIVERIES.map((delivery) => findWebhookDelivery(db, delivery.project_id, delivery.id))),
  upper: await findWebhookDelivery(db, PROJECT, DELIVERIES[0]!.id.toUpperCase()),
  list: await listWebhookDeliveries(db, PROJECT, { limit: 10 }),
  page: await listWebhookDeliveries(db, PROJECT, { limit: 10, before: DELIVERIES[2]!.id }),
  oddCursor: await listWebhookDeliveries(db, PROJECT, { limit: 10, before: DELIVERIES[2]!.id.slice(0, 20) + 'g' }),
  since: await listWebhookDeliveries(db, PROJECT, { limit: 10, since: T + 2, until: T + 3 }),
  failed: await listWebhookDeliveries(db, PROJECT, { limit: 10, status: 'failed' }),
  pending: await listWebhookDeliveries(db, PROJECT, { limit: 10, status: 'pending' }),
  template: await listWebhookDeliveries(db, PROJECT, { limit: 10, event: 'template.status_changed' }),
  ofMessage: await listWebhookDeliveries(db, PROJECT, { limit: 10, messageId: MESSAGE, before: DELIVERIES[2]!.id }),
  forMessage: await listDeliveriesForMessage(db, PROJECT, MESSAGE),
  other: await listWebhookDeliveries(db, OTHER, { limit: 10 }),
  odd: await listWebhookDeliveries(db, OTHER, { limit: 10, messageId: 'msg_short' }),
  notTheirs: await findWebhookDelivery(db, OTHER, DELIVERIES[0]!.id),
});

for (const kind of databaseKinds()) {
  describe(`webhook delivery ids stored as bytes (${kind})`, () => {
    it('rows written before migration 0027 read back as the same rows written after it, and are written and purged after it', async () => {
      // The same rows written at the latest schema, through the db layer: what every read must show.
      const reference = await createTestDatabase(kind);
      const current = openDatabase(reference.url, { poolSize: 2 });
      let expected;
      try {
        await migrateToLatest(current.db);
        await seed(current.db, true);
        expected = await reads(current.db);
      } finally {
        await current.close();
        await reference.drop();
      }
      assert.equal(expected.list.length, 3);
      assert.equal(expected.page.length, 2);
      assert.deepEqual(expected.since.map((row) => row.delivery.id), [DELIVERIES[1]!.id]);
      assert.equal(expected.failed[0]!.attempts.length, 3);
      assert.equal(expected.one[1]!.delivery.created_at, T - 5);
      assert.equal(expected.one[3]!.delivery.id, 'whd_NOT_A_UUID');
      assert.equal(expected.odd.length, 1);
      assert.equal(expected.upper, undefined);
      assert.equal(expected.notTheirs, undefined);

      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        const db = database.db as unknown as Kysely<unknown>;
        const schema =
          kind === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]!.schema : undefined;
        await migrateThrough(db, '0026_deliveries_by_key', schema);
        await seed(database.db, false);
        const names = Object.keys(migrations);
        assert.deepEqual(await migrateToLatest(database.db), names.slice(names.indexOf('0027_delivery_ids_as_bytes')));
        assert.deepEqual(await reads(database.db), expected);

        if (kind === 'sqlite') {
          const types = await sql<{ i: string; e: string; m: string; c: string }>`
            select typeof(id) as i, typeof(event_id) as e, typeof(message_id) as m, typeof(created_at) as c
            from webhook_deliveries order by project_id, id`.execute(db);
          assert.deepEqual(
            types.rows.map((row) => [row.i, row.e, row.m, row.c]),
            [
              ['blob', 'blob', 'blob', 'null'],
              ['blob', 'blob', 'blob', 'integer'],
              ['blob', 'text', 'null', 'null'],
              ['text', 'text', 'text', 'integer'],
              ['blob', 'blob', 'null', 'null'],
            ],
          );
          const attempts = await sql<{ t: string }>`select typeof(delivery_id) as t from webhook_attempts`.execute(db);
          assert.deepEqual(attempts.rows.map((row) => row.t), ['blob', 'blob']);
          const indexes = await sql<{ name: string }>`select name from pragma_index_list('webhook_deliveries') order by name`.execute(db);
          assert.deepEqual(indexes.rows.map((row) => row.name), [
            'sqlite_autoindex_webhook_deliveries_1',
            'webhook_deliveries_by_message',
            'webhook_deliveries_due_by_id',
            'webhook_deliveries_failed',
            'webhook_deliveries_failed_by_id',
            'webhook_deliveries_queue',
            'webhook_deliveries_rare_events',
          ]);
          const stat = await sql<{ idx: string; stat: string }>`select idx, stat from sqlite_stat1 where tbl = 'webhook_deliveries'`.execute(db);
          assert.deepEqual(stat.rows.map((row) => [row.idx, row.stat]), [['sqlite_autoindex_webhook_deliveries_1', '1000000 10000 1']]);
          const keys = await sql<{ table: string; on_delete: string }>`select "table", on_delete from pragma_foreign_key_list('webhook_deliveries')`.execute(db);
          assert.deepEqual(keys.rows.map((row) => [row.table, row.on_delete]), [['projects', 'CASCADE']]);
        }

        // Written after it: a retry, then its attempt recorded (the earlier attempts stay).
        assert.equal(await requestWebhookRetry(database.db, PROJECT, DELIVERIES[1]!.id, T + 6_000), true);
        assert.equal(await requestWebhookRetry(database.db, OTHER, DELIVERIES[1]!.id, T + 6_000), false);
        await database.db.transaction().execute((trx) =>
          recordWebhookAttempts(trx, [
            {
              attempt: { id: 'att_01jdtest0000000000000000a4', delivery_id: DELIVERIES[1]!.id, attempt: 4, at: T + 6_100, url: URL, status_code: 200, duration_ms: 4, error: null, response_body: 'ok' },
              previous: { id: 'att_01jdtest0000000000000000a3', delivery_id: DELIVERIES[1]!.id, attempt: 3, at: T + 2_050, url: URL, status_code: 500, duration_ms: 7, error: 'HTTP 500', response_body: 'no' },
              update: { projectId: PROJECT, status: 'succeeded', url: URL, dueAt: null, now: T + 6_200 },
            },
          ]),
        );
        const retried = await findWebhookDelivery(database.db, PROJECT, DELIVERIES[1]!.id);
        assert.equal(retried!.delivery.status, 'succeeded');
        assert.equal(retried!.delivery.created_at, T - 5);
        assert.deepEqual(retried!.attempts.map((attempt) => [attempt.attempt, attempt.status_code]), [[1, 500], [2, 500], [3, 500], [4, 200]]);

        // Purged by retention, a step at a time (its cursor is a public-looking id again).
        const cursors: (string | undefined)[] = [];
        for (let after: string | undefined = ''; after !== undefined; ) {
          after = (await purgeDeliveriesStep(database.db, { projectId: OTHER, cutoff: T + 1_000_000, after, limit: 1 })).next;
          cursors.push(after);
        }
        const left = (await listWebhookDeliveries(database.db, OTHER, { limit: 10 })).map((row) => row.delivery.id);
        if (kind === 'sqlite') {
          // The id kept as text sorts before every id as bytes: within the cutoff's bound, purged first.
          assert.deepEqual(cursors, ['whd_NOT_A_UUID', DELIVERIES[4]!.id, undefined]);
          assert.deepEqual(left, []);
        } else {
          // As text, 'whd_…' sorts after the cutoff's UUIDv7 prefix: left alone, as before 0027.
          assert.deepEqual(cursors, [DELIVERIES[4]!.id, undefined]);
          assert.deepEqual(left, ['whd_NOT_A_UUID']);
        }
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}

// More rows than the migration copies at a time (500), of three projects whose ids interleave, with
// attempts kept apart: every row and every attempt is carried over, each read as it was written.
for (const kind of databaseKinds()) {
  describe(`webhook delivery ids stored as bytes: a database of many rows (${kind})`, () => {
    it('migrates 1,234 deliveries of three projects page by page, every id, time and attempt kept', async () => {
      const projects = ['proj_01jdtest0000000000000000p1', 'proj_01jdtest0000000000000000p2', 'proj_01jdtest0000000000000000p3'];
      const rows: WebhookDeliveryRow[] = Array.from({ length: 1_234 }, (_, i) => ({
        id: uuidAt(T + Math.floor(i / 3), (i % 7 === 0 ? 'f' : '0') + i.toString(16).padStart(11, '0')),
        project_id: projects[i % 3]!,
        event_id: `evt_01jdtest${i.toString(16).padStart(18, '0')}`,
        message_id: i % 5 === 0 ? null : `msg_01jdtest${Math.floor(i / 4).toString(16).padStart(18, '0')}`,
        event: i % 5 === 0 ? 'webhook.test' : 'message.sent',
        url: URL,
        endpoint_id: null,
        template_id: null,
        payload: `{"n":${i}}`,
        status: i % 4 === 0 ? 'failed' : 'succeeded',
        attempt_count: 1,
        due_at: null,
        lease_expires_at: null,
        // Most made when their id says; some not.
        created_at: i % 11 === 0 ? T - i : T + Math.floor(i / 3),
        updated_at: T + 10_000 + i,
      }));
      // 1,111 retried deliveries: more than the migration's page of 1,000 attempted ids.
      const attempts = rows
        .filter((_, i) => i % 10 !== 9)
        .map((row, n) => ({ id: `att_01jdtest${n.toString(16).padStart(18, '0')}`, delivery_id: row.id, attempt: 1, at: T + n, url: URL, status_code: 500, duration_ms: 1, error: 'HTTP 500', response_body: 'no' }));
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        const db = database.db as unknown as Kysely<unknown>;
        const schema =
          kind === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]!.schema : undefined;
        await migrateThrough(db, '0026_deliveries_by_key', schema);
        for (const project of projects) {
          await sql`insert into projects (id, name, owner_email, webhook_secret_enc, created_at, updated_at)
            values (${project}, 'p', 'o@example.com', 'sealed', 1, 1)`.execute(database.db);
        }
        for (let i = 0; i < rows.length; i += 100) await database.db.insertInto('webhook_deliveries').values(rows.slice(i, i + 100)).execute();
        for (let i = 0; i < attempts.length; i += 100) await database.db.insertInto('webhook_attempts').values(attempts.slice(i, i + 100)).execute();
        await migrateToLatest(database.db);

        for (const project of projects) {
          const want = rows.filter((row) => row.project_id === project).sort((a, b) => (a.id < b.id ? 1 : -1));
          const seen: { id: string; created_at: number; event_id: string; message_id: string | null; attempts: number }[] = [];
          for (let before: string | undefined; ; ) {
            const page = await listWebhookDeliveries(database.db, project, { limit: 97, ...(before !== undefined && { before }) });
            seen.push(...page.map(({ delivery, attempts: list }) => ({
              id: delivery.id, created_at: Number(delivery.created_at), event_id: delivery.event_id, message_id: delivery.message_id, attempts: list.length,
            })));
            if (page.length < 97) break;
            before = page.at(-1)!.delivery.id;
          }
          assert.deepEqual(
            seen,
            want.map((row) => ({
              id: row.id, created_at: row.created_at, event_id: row.event_id, message_id: row.message_id,
              attempts: attempts.filter((attempt) => attempt.delivery_id === row.id).length + 0,
            })),
          );
        }
        if (kind === 'sqlite') {
          const types = await sql<{ t: string; n: number }>`select typeof(id) || typeof(event_id) || typeof(created_at) as t, count(*) as n
            from webhook_deliveries group by 1 order by 1`.execute(db);
          const notCarried = rows.filter((_, i) => i % 11 === 0 && i > 0).length;
          assert.deepEqual(types.rows.map((row) => [row.t, Number(row.n)]), [
            ['blobblobinteger', notCarried],
            ['blobblobnull', rows.length - notCarried],
          ]);
          const attemptTypes = await sql<{ t: string }>`select distinct typeof(delivery_id) as t from webhook_attempts`.execute(db);
          assert.deepEqual(attemptTypes.rows.map((row) => row.t), ['blob']);
        }
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}
