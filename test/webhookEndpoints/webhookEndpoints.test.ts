import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { insertProject } from '../../src/db/projects.ts';
import { DomainError } from '../../src/errors.ts';
import {
  changeWebhookEndpoint,
  createWebhookEndpoint,
  endpointChanges,
  getWebhookEndpoint,
  MAX_ENDPOINTS_PER_PROJECT,
  newWebhookEndpoint,
  removeWebhookEndpoint,
} from '../../src/webhookEndpoints/webhookEndpoints.ts';
import { databaseKinds, testProjectRow, withMigratedDatabase } from '../support/databases.ts';

// The webhook-endpoint use case called without HTTP: the cap, the event check, not-found.

const URL = 'https://hooks.example.com/svc';
// The URL check resolves hosts; a private-address allowance keeps it off the network's answers.
const ALLOW_PRIVATE = true;

async function rejects(work: Promise<unknown>, code: string): Promise<DomainError> {
  const error = await work.then(
    () => assert.fail(`expected ${code}`),
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof DomainError, String(error));
  assert.equal(error.code, code);
  return error;
}

for (const kind of databaseKinds()) {
  describe(`webhook endpoints as a use case (${kind})`, () => {
    it(`stores up to ${MAX_ENDPOINTS_PER_PROJECT} endpoints a project, then refuses the next`, async () => {
      await withMigratedDatabase(kind, async (database) => {
        const now = Date.now();
        await insertProject(database.db, testProjectRow('proj_a', { created_at: now, updated_at: now }));
        await insertProject(database.db, testProjectRow('proj_b', { created_at: now, updated_at: now }));
        for (let i = 0; i < MAX_ENDPOINTS_PER_PROJECT; i++) {
          const row = await newWebhookEndpoint('proj_a', { url: `${URL}/${i}` }, ALLOW_PRIVATE, now + i);
          await database.db.transaction().execute((trx) => createWebhookEndpoint(trx, row));
        }
        const over = await newWebhookEndpoint('proj_a', { url: URL }, ALLOW_PRIVATE, now);
        const error = await rejects(database.db.transaction().execute((trx) => createWebhookEndpoint(trx, over)), 'webhook_endpoint_limit_reached');
        assert.equal(error.status, 409);
        assert.equal(error.message, `The project already has ${MAX_ENDPOINTS_PER_PROJECT} webhook endpoints, the most it may hold; delete one first.`);
        // Another project's cap is its own.
        const other = await newWebhookEndpoint('proj_b', { url: URL, events: ['message.sent', 'message.sent'] }, ALLOW_PRIVATE, now);
        await database.db.transaction().execute((trx) => createWebhookEndpoint(trx, other));
        const stored = await getWebhookEndpoint(database.reader, 'proj_b', other.id);
        assert.equal(stored.events, '["message.sent"]');
        await rejects(getWebhookEndpoint(database.reader, 'proj_a', other.id), 'not_found');
      });
    });

    it('refuses unknown events by name, and ids it does not know', async () => {
      await withMigratedDatabase(kind, async (database) => {
        const now = Date.now();
        await insertProject(database.db, testProjectRow('proj_a', { created_at: now, updated_at: now }));
        const unknown = await rejects(newWebhookEndpoint('proj_a', { url: URL, events: ['message.sent', 'nope'] }, ALLOW_PRIVATE, now), 'webhook_event_unknown');
        assert.equal(unknown.message, 'Unknown event type: nope.');
        assert.equal(unknown.errors![0]!.field, '/events/1');
        await rejects(endpointChanges('not-an-id', { enabled: false }, ALLOW_PRIVATE, now), 'not_found');
        const missing = 'we_' + '0'.repeat(26);
        const changes = await endpointChanges(missing, { enabled: false }, ALLOW_PRIVATE, now);
        await rejects(database.db.transaction().execute((trx) => changeWebhookEndpoint(trx, 'proj_a', missing, changes)), 'not_found');
        await rejects(database.db.transaction().execute((trx) => removeWebhookEndpoint(trx, 'proj_a', missing)), 'not_found');
      });
    });
  });
}
