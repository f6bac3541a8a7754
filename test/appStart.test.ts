import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createTestDatabase } from './support/databases.ts';
import { TEST_ENCRYPTION_KEY } from './support/server.ts';

// Start-up order: the HTTP server is readied (its plugins and routes, work that holds the event
// loop) before the workers start. The other way round, the dispatcher's first pacing grants
// waited behind that work and their sends left in the next calendar second, beside that
// second's own budget: 12 sends in one second to numbers capped at 10 (bench/README.md, issue #8).

describe('start-up', () => {
  it('readies the HTTP server before any worker starts', async () => {
    const database = await createTestDatabase('sqlite');
    const app = await createApp(
      loadConfig({
        SVC_LOG_LEVEL: 'silent',
        SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        HOST: '127.0.0.1',
        PORT: '0',
        SVC_DATABASE_URL: database.url,
      }),
    );
    let serverReadyWhenWorkersStarted: boolean | undefined;
    const startProvider = app.provider.start.bind(app.provider);
    app.provider.start = (inbound) => {
      // Fastify refuses new routes once it is ready.
      try {
        app.http!.get('/probe-route', async () => 'probe');
        serverReadyWhenWorkersStarted = false;
      } catch {
        serverReadyWhenWorkersStarted = true;
      }
      return startProvider(inbound);
    };
    try {
      await app.start();
      assert.equal(serverReadyWhenWorkersStarted, true);
    } finally {
      await app.stop();
      await database.drop();
    }
  });
});
