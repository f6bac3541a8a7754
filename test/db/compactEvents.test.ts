import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { listMessageEvents, type MessageRow } from '../../src/db/messages.ts';
import { withPayloads } from '../../src/db/webhookPayloads.ts';
import type { WebhookDeliveryRow } from '../../src/db/webhookDeliveries.ts';
import { listEventsAfter } from '../../src/db/events.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';
import { migrateThrough } from '../support/migrateThrough.ts';

// Bytes per message (issue 19, migration 0025): on SQLite message_events is a WITHOUT ROWID table
// keyed (message_id, id), with one index of its own (by project, for the feed). Events written
// before the rebuild read back unchanged, through every read of them.

const PROJECT = 'proj_01jdtest0000000000000000aa';
const MESSAGE = 'msg_01jdtest0000000000000000aa';
const EVENTS = [
  { id: 'evt_01jdtest0000000000000000a1', status: 'QUEUED', occurred_at: 1_764_150_000_000, error: null },
  { id: 'evt_01jdtest0000000000000000a2', status: 'SENT', occurred_at: 1_764_150_001_000, error: null },
  {
    id: 'evt_01jdtest0000000000000000a3',
    status: 'FAILED',
    occurred_at: 1_764_150_002_123,
    error: JSON.stringify({ code: '131026', title: 'Message undeliverable', message: 'The number is not on WhatsApp.' }),
  },
];

for (const kind of databaseKinds()) {
  describe(`message events keyed by their message (${kind})`, () => {
    it('rows written before migration 0025 read back unchanged, and the table has the compact shape', async () => {
      const testDb = await createTestDatabase(kind);
      const database = openDatabase(testDb.url, { poolSize: 2 });
      try {
        const db = database.db as unknown as Kysely<unknown>;
        const schema =
          kind === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]!.schema : undefined;
        await migrateThrough(db, '0024_waba_currency', schema);
        await sql`insert into projects (id, name, owner_email, webhook_secret_enc, created_at, updated_at)
          values (${PROJECT}, 'p', 'o@example.com', 'sealed', 1, 1)`.execute(db);
        await sql`insert into messages (id, project_id, recipient, template_id, template_name, language, category, variables,
            rendered, status, queued_at, updated_at, provider_message_id, failed_at)
          values (${MESSAGE}, ${PROJECT}, '+15550000001', 'tpl_1', 'order_update', 'en_US', 'UTILITY', '[]', 'Hello', 'FAILED',
            1764150000000, 1764150002123, 'wamid.before', 1764150002123)`.execute(db);
        for (const event of EVENTS) {
          await sql`insert into message_events (id, message_id, project_id, status, occurred_at, error, created_at)
            values (${event.id}, ${MESSAGE}, ${PROJECT}, ${event.status}, ${event.occurred_at}, ${event.error}, ${event.occurred_at + 5})`.execute(db);
        }
        const message = (await database.db.selectFrom('messages').selectAll().where('id', '=', MESSAGE).executeTakeFirstOrThrow()) as MessageRow;
        const before = await listMessageEvents(database.db, message);
        const feedBefore = await listEventsAfter(database.db, PROJECT, '', 10);
        const delivery = {
          id: '0190aaaa-0000-7000-8000-000000000001',
          project_id: PROJECT,
          event_id: EVENTS[2]!.id,
          message_id: MESSAGE,
          event: 'message.failed',
          payload: '',
        } as WebhookDeliveryRow;
        const [bodyBefore] = await withPayloads(database.db, [delivery]);
        assert.notEqual(bodyBefore!.payload, '', 'a body rebuilt before');

        const names = Object.keys(migrations);
        assert.deepEqual(await migrateToLatest(database.db), names.slice(names.indexOf('0025_compact_ids')));

        assert.deepEqual(await listMessageEvents(database.db, message), before);
        assert.deepEqual(
          before.map((event) => event.id),
          EVENTS.map((event) => event.id),
        );
        assert.deepEqual(await listEventsAfter(database.db, PROJECT, '', 10), feedBefore);
        assert.equal((await withPayloads(database.db, [delivery]))[0]!.payload, bodyBefore!.payload);

        if (kind === 'sqlite') {
          const table = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'message_events'`.execute(db);
          assert.match(table.rows[0]!.sql, /primary key \(message_id, id\)\s*\)\s*without rowid$/i);
          const indexes = await sql<{ name: string; origin: string }>`select name, origin from pragma_index_list('message_events') order by name`.execute(db);
          assert.deepEqual(
            indexes.rows.map((row) => [row.name, row.origin]),
            [
              ['message_events_by_project', 'c'],
              ['sqlite_autoindex_message_events_1', 'pk'],
            ],
          );
          const columns = await sql<{ name: string; type: string; notnull: number }>`select name, type, "notnull" from pragma_table_info('message_events')`.execute(db);
          assert.deepEqual(
            columns.rows.map((row) => `${row.name} ${row.type.toLowerCase()}${row.notnull ? ' not null' : ''}`),
            ['id text not null', 'message_id text not null', 'project_id text not null', 'status text not null', 'occurred_at bigint not null', 'error text', 'created_at bigint not null'],
          );
          const keys = await sql<{ table: string; on_delete: string }>`select "table", on_delete from pragma_foreign_key_list('message_events')`.execute(db);
          assert.deepEqual(keys.rows.map((row) => [row.table, row.on_delete]), [['messages', 'CASCADE']]);
          // Still deleted with its message.
          await database.db.deleteFrom('messages').where('id', '=', MESSAGE).execute();
          assert.equal((await database.db.selectFrom('message_events').select('id').where('project_id', '=', PROJECT).execute()).length, 0);
        }
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}
