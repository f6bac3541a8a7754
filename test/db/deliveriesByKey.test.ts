import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { type Db, openDatabase } from '../../src/db/database.ts';
import { storedDelivery, storedDeliveryId } from '../../src/db/deliveryIds.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';
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

// Bytes per message (issue 19, migration 0026): a webhook delivery is found by its key
// (project_id, id). SQLite stores the table WITHOUT ROWID under that key (no index of ids alone, no
// separate index by project); PostgreSQL drops its hash index of ids and keys its index by message
// on the message id alone. Deliveries written before read back unchanged, through every read of
// them, and are written by key afterwards.

const PROJECT = 'proj_01jdtest0000000000000000aa';
const OTHER = 'proj_01jdtest0000000000000000bb';
const MESSAGE = 'msg_01jdtest0000000000000000aa';
const URL = 'https://hooks.example.com/svc';

type Seeded = Omit<WebhookDeliveryRow, 'url' | 'endpoint_id' | 'template_id' | 'lease_expires_at' | 'created_at' | 'updated_at'>;
const DELIVERIES: Seeded[] = [
  // Answered at its first attempt (0023's shape: the attempt in the row).
  {
    id: '0190aaaa-0000-7000-8000-000000000001', project_id: PROJECT, event_id: 'evt_01jdtest0000000000000000a1', message_id: MESSAGE,
    event: 'message.sent', payload: '', status: 'succeeded', attempt_count: 1, due_at: null,
    last_attempt_at: 1_764_150_001_100, last_status_code: 204, last_duration_ms: 12, last_error: null, last_response_body: '',
  },
  // Written before 0023: its attempts in webhook_attempts, its body stored.
  {
    id: '0190aaaa-0000-7000-8000-000000000002', project_id: PROJECT, event_id: 'evt_01jdtest0000000000000000a2', message_id: MESSAGE,
    event: 'message.delivered', payload: '{"event":"message.delivered"}', status: 'failed', attempt_count: 2, due_at: null,
    last_attempt_at: null, last_status_code: null, last_duration_ms: null, last_error: null, last_response_body: null,
  },
  // Pending, about no message (a template event).
  {
    id: '0190aaaa-0000-7000-8000-000000000003', project_id: PROJECT, event_id: 'evt_01jdtest0000000000000000a3', message_id: null,
    event: 'template.status_changed', payload: '{"event":"template.status_changed"}', status: 'pending', attempt_count: 0, due_at: 1_764_150_003_000,
    last_attempt_at: null, last_status_code: null, last_duration_ms: null, last_error: null, last_response_body: null,
  },
  // Another project's.
  {
    id: '0190aaaa-0000-7000-8000-000000000004', project_id: OTHER, event_id: 'evt_01jdtest0000000000000000b1', message_id: null,
    event: 'test', payload: '{"event":"test"}', status: 'succeeded', attempt_count: 1, due_at: null,
    last_attempt_at: 1_764_150_004_100, last_status_code: 200, last_duration_ms: 3, last_error: null, last_response_body: 'ok',
  },
];
const ATTEMPTS = [1, 2].map((attempt) => ({
  id: `att_01jdtest0000000000000000a${attempt}`, delivery_id: DELIVERIES[1]!.id, attempt, at: 1_764_150_002_000 + attempt,
  url: URL, status_code: 500, duration_ms: 7, error: 'HTTP 500', response_body: 'no',
}));

for (const kind of databaseKinds()) {
  describe(`webhook deliveries keyed by (project_id, id) (${kind})`, () => {
    it('rows written before migration 0026 read back unchanged, are written by key after it, and the schema has the compact shape', async () => {
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        const db = database.db as unknown as Kysely<unknown>;
        const schema =
          kind === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]!.schema : undefined;
        await migrateThrough(db, '0025_compact_ids', schema);
        for (const project of [PROJECT, OTHER]) {
          await sql`insert into projects (id, name, owner_email, webhook_secret_enc, created_at, updated_at)
            values (${project}, 'p', 'o@example.com', 'sealed', 1, 1)`.execute(db);
        }
        for (const [i, delivery] of DELIVERIES.entries()) {
          await database.db
            .insertInto('webhook_deliveries')
            .values({ ...delivery, url: URL, endpoint_id: null, template_id: null, lease_expires_at: null, created_at: 1_764_150_000_000 + i, updated_at: 1_764_150_005_000 + i })
            .execute();
        }
        await database.db.insertInto('webhook_attempts').values(ATTEMPTS).execute();

        // Every read of the log (the payloads and circuits are not touched by 0026).
        const reads = async (from: Db) => ({
          one: await Promise.all(DELIVERIES.map((delivery) => findWebhookDelivery(from, delivery.project_id, delivery.id))),
          list: await listWebhookDeliveries(from, PROJECT, { limit: 10 }),
          failed: await listWebhookDeliveries(from, PROJECT, { limit: 10, status: 'failed' }),
          pending: await listWebhookDeliveries(from, PROJECT, { limit: 10, status: 'pending' }),
          ofMessage: await listWebhookDeliveries(from, PROJECT, { limit: 10, messageId: MESSAGE, before: DELIVERIES[2]!.id }),
          forMessage: await listDeliveriesForMessage(from, PROJECT, MESSAGE),
          other: await listWebhookDeliveries(from, OTHER, { limit: 10 }),
          notTheirs: await findWebhookDelivery(from, OTHER, DELIVERIES[0]!.id),
        });
        // As the same rows read when written at the latest schema (since 0027 SQLite stores their
        // ids as bytes, which the reads of this code expect).
        const reference = await createTestDatabase(kind);
        const current = openDatabase(reference.url, { poolSize: 2 });
        let before;
        try {
          await migrateToLatest(current.db);
          for (const project of [PROJECT, OTHER]) {
            await sql`insert into projects (id, name, owner_email, webhook_secret_enc, created_at, updated_at)
              values (${project}, 'p', 'o@example.com', 'sealed', 1, 1)`.execute(current.db);
          }
          for (const [i, delivery] of DELIVERIES.entries()) {
            await current.db
              .insertInto('webhook_deliveries')
              .values(storedDelivery(current.db, { ...delivery, url: URL, endpoint_id: null, template_id: null, lease_expires_at: null, created_at: 1_764_150_000_000 + i, updated_at: 1_764_150_005_000 + i }))
              .execute();
          }
          await current.db.insertInto('webhook_attempts').values(ATTEMPTS.map((attempt) => ({ ...attempt, delivery_id: storedDeliveryId(current.db, attempt.delivery_id) as string }))).execute();
          before = await reads(current.db);
        } finally {
          await current.close();
          await reference.drop();
        }
        assert.equal(before.list.length, 3);
        assert.equal(before.failed[0]!.attempts.length, 2);
        assert.equal(before.notTheirs, undefined);

        const names = Object.keys(migrations);
        assert.deepEqual(await migrateToLatest(database.db), names.slice(names.indexOf('0026_deliveries_by_key')));
        assert.deepEqual(await reads(database.db), before);

        // Written by key: a retry, then its attempt recorded (the earlier attempts stay).
        assert.equal(await requestWebhookRetry(database.db, PROJECT, DELIVERIES[1]!.id, 1_764_150_006_000), true);
        assert.equal(await requestWebhookRetry(database.db, OTHER, DELIVERIES[1]!.id, 1_764_150_006_000), false);
        await database.db.transaction().execute((trx) =>
          recordWebhookAttempts(trx, [
            {
              attempt: { id: 'att_01jdtest0000000000000000a3', delivery_id: DELIVERIES[1]!.id, attempt: 3, at: 1_764_150_006_100, url: URL, status_code: 200, duration_ms: 4, error: null, response_body: 'ok' },
              update: { projectId: PROJECT, status: 'succeeded', url: URL, dueAt: null, now: 1_764_150_006_200 },
            },
          ]),
        );
        const retried = await findWebhookDelivery(database.db, PROJECT, DELIVERIES[1]!.id);
        assert.equal(retried!.delivery.status, 'succeeded');
        assert.deepEqual(retried!.attempts.map((attempt) => [attempt.attempt, attempt.status_code]), [[1, 500], [2, 500], [3, 200]]);

        if (kind === 'sqlite') {
          const table = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'webhook_deliveries'`.execute(db);
          assert.match(table.rows[0]!.sql, /primary key \(project_id, id\)\s*\)\s*without rowid$/i);
          const indexes = await sql<{ name: string; origin: string }>`select name, origin from pragma_index_list('webhook_deliveries') order by name`.execute(db);
          assert.deepEqual(
            indexes.rows.map((row) => [row.name, row.origin]),
            [
              ['sqlite_autoindex_webhook_deliveries_1', 'pk'],
              ['webhook_deliveries_by_message', 'c'],
              ['webhook_deliveries_due_by_id', 'c'],
              ['webhook_deliveries_failed', 'c'],
              ['webhook_deliveries_failed_by_id', 'c'],
              ['webhook_deliveries_queue', 'c'],
              ['webhook_deliveries_rare_events', 'c'],
            ],
          );
          const byMessage = await sql<{ name: string }>`select name from pragma_index_info('webhook_deliveries_by_message') order by seqno`.execute(db);
          assert.deepEqual(byMessage.rows.map((row) => row.name), ['message_id', 'project_id', 'id']);
          const keys = await sql<{ table: string; on_delete: string }>`select "table", on_delete from pragma_foreign_key_list('webhook_deliveries')`.execute(db);
          assert.deepEqual(keys.rows.map((row) => [row.table, row.on_delete]), [['projects', 'CASCADE']]);
          const attemptKeys = await sql`select * from pragma_foreign_key_list('webhook_attempts')`.execute(db);
          assert.deepEqual(attemptKeys.rows, []);
          const stat = await sql<{ idx: string; stat: string }>`select idx, stat from sqlite_stat1 where tbl = 'webhook_deliveries'`.execute(db);
          assert.deepEqual(stat.rows.map((row) => [row.idx, row.stat]), [['sqlite_autoindex_webhook_deliveries_1', '1000000 10000 1']]);
          // Still deleted with its project.
          await database.db.deleteFrom('projects').where('id', '=', OTHER).execute();
          assert.equal((await database.db.selectFrom('webhook_deliveries').select('id').where('project_id', '=', OTHER).execute()).length, 0);
        } else {
          const indexes = await sql<{ name: string; definition: string }>`
            select indexname as name, indexdef as definition from pg_indexes
            where schemaname = current_schema() and tablename = 'webhook_deliveries' order by indexname`.execute(db);
          const names = indexes.rows.map((row) => row.name);
          assert.ok(!names.includes('webhook_deliveries_by_id'), names.join(', '));
          assert.match(indexes.rows.find((row) => row.name === 'webhook_deliveries_by_message')!.definition, /\(message_id\)$/);
          assert.match(indexes.rows.find((row) => row.name === 'webhook_deliveries_pkey')!.definition, /\(project_id, id\)$/);
        }
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}
