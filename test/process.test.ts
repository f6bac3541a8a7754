import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { call } from './support/http.ts';
import { createTestDatabase, databaseKinds } from './support/databases.ts';
import { runSvc, startServiceProcess } from './support/process.ts';
import { TEST_ENCRYPTION_KEY } from './support/server.ts';

for (const kind of databaseKinds()) {
  describe(`the svc process (${kind})`, () => {
    it('migrates with `svc migrate`, then reports the schema up to date', async () => {
      const database = await createTestDatabase(kind);
      try {
        const env = { SVC_DATABASE_URL: database.url, SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY };
        const first = await runSvc(['migrate'], env);
        assert.equal(first.code, 0, first.output);
        assert.match(first.output, /applied: 0001_/);
        const second = await runSvc(['migrate'], env);
        assert.equal(second.code, 0, second.output);
        assert.match(second.output, /up to date/);
      } finally {
        await database.drop();
      }
    });

    it('serves, then exits 0 on SIGTERM after finishing in-flight requests', async () => {
      const database = await createTestDatabase(kind);
      try {
        const service = await startServiceProcess({ SVC_DATABASE_URL: database.url, SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
        const created = await call(service.url, 'POST', '/v1/projects', {
          body: { name: 'p', ownerEmail: 'a@example.com' },
        });
        assert.equal(created.status, 200);
        const inFlight = Promise.allSettled(
          Array.from({ length: 20 }, () => call(service.url, 'GET', '/v1/projects/me', { key: created.body.apiKey })),
        );
        await new Promise((resolve) => setTimeout(resolve, 20));
        const started = Date.now();
        const code = await service.stop('SIGTERM');
        const replies = await inFlight;
        assert.equal(code, 0, service.output());
        assert.ok(Date.now() - started < 10_000);
        // Requests the server had accepted are answered; none is cut off with a 5xx.
        const answered = replies.filter((reply) => reply.status === 'fulfilled').map((reply) => reply.value.status);
        assert.ok(answered.length > 0);
        for (const status of answered) assert.ok([200, 503].includes(status), String(status));
        assert.doesNotMatch(service.output(), new RegExp(created.body.apiKey));
      } finally {
        await database.drop();
      }
    });
  });
}

describe('the svc process refuses to start', () => {
  it('on PostgreSQL without SVC_ENCRYPTION_KEY', { skip: !process.env.SVC_TEST_POSTGRES_URL }, async () => {
    const database = await createTestDatabase('postgres');
    const result = await runSvc(['serve'], { SVC_DATABASE_URL: database.url, PORT: '0' });
    assert.equal(result.code, 1);
    assert.match(result.output, /configuration: SVC_ENCRYPTION_KEY is required with PostgreSQL/);
  });

  it('with an invalid setting, naming the variable', async () => {
    const result = await runSvc(['serve'], { PORT: 'eighty' });
    assert.equal(result.code, 1);
    assert.match(result.output, /configuration: PORT must be/);
  });
});
