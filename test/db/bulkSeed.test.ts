import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { listDeliveriesForMessage } from '../../src/db/webhookDeliveries.ts';
import { BULK_SPACING_MS, BULK_START, bulkDeliveryId, bulkMessageId, OLD_TENANT, seedBulk } from '../support/bulkSeed.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';

// The plan tests and bench/spreadBurst.ts seed deliveries in bulk SQL. svc must read them as its
// own: on SQLite their ids are stored as svc 0027 stores them (16 bytes), or a message's
// deliveries are not found and the seeded file is not the shape svc writes.
for (const kind of databaseKinds()) {
  describe(`bulk seed (${kind})`, () => {
    it('writes a message’s deliveries as svc reads them: ids, event ids and created times', async () => {
      const testDb = await createTestDatabase(kind, { migrated: true });
      const database = openDatabase(testDb.url, { poolSize: 1 });
      try {
        await seedBulk(database, { projects: 3, messages: 30, oldTenantMessages: 10 });
        for (const n of [1, 7, 10]) {
          const deliveries = await listDeliveriesForMessage(database.db, OLD_TENANT, bulkMessageId(n));
          assert.deepEqual(
            deliveries.map(({ delivery }) => [delivery.id, delivery.message_id, delivery.event_id, Number(delivery.created_at)]),
            ([1, 2, 3] as const).map((k) => [
              bulkDeliveryId(n, k),
              bulkMessageId(n),
              `evt_${String(n).padStart(25, '0')}${k}`,
              BULK_START + n * BULK_SPACING_MS + k * 500,
            ]),
            `message ${n}`,
          );
        }
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}
