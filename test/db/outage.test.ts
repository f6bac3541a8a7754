import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { call, type Reply } from '../support/http.ts';
import { createPrivatePostgres, type PrivatePostgres, privatePostgresUnavailable } from '../support/privatePostgres.ts';
import { startServiceProcess, type ServiceProcess } from '../support/process.ts';
import { senderAt } from '../support/sending.ts';
import { TEST_ENCRYPTION_KEY } from '../support/server.ts';

// The database restarts under load (a fast shutdown terminates every session with 57P01, then
// connections are refused until it is back): svc must not crash, must answer 503 problem+json
// meanwhile, must recover by itself, and must lose nothing it accepted. Runs wherever the
// PostgreSQL half of the suite runs (always in CI).

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a PostgreSQL restart under load', { skip: !process.env.SVC_TEST_POSTGRES_URL }, () => {
  let cluster: PrivatePostgres;
  let service: ServiceProcess;

  before(() => {
    const why = privatePostgresUnavailable();
    if (why) throw new Error(`the outage test needs a private PostgreSQL cluster: ${why}`);
    cluster = createPrivatePostgres();
    cluster.start();
  });

  after(async () => {
    await service?.stop('SIGTERM');
    cluster?.destroy();
  });

  it('no crash, 503 during the outage, recovery on its own, nothing accepted lost', { timeout: 120_000 }, async (t) => {
    service = await startServiceProcess({
      SVC_DATABASE_URL: cluster.url,
      SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      SVC_LOG_LEVEL: 'info',
      SVC_SANDBOX_DELIVERY_DELAY_MS: '20',
      SVC_SANDBOX_READ_DELAY_MS: '20',
      SVC_SIGNUP_RATE_LIMIT: '100000',
    });
    const { key } = await senderAt(service.url, { templateName: 'outage', language: 'en', bodyText: 'Your code is {{1}} today.' });

    const accepted: string[] = [];
    const replies: Reply[] = [];
    const refusedConnections: string[] = [];
    let sending = true;
    let i = 0;
    const load = Array.from({ length: 8 }, async () => {
      while (sending) {
        const n = i++;
        try {
          const reply = await call(service.url, 'POST', '/v1/messages', {
            key,
            body: { to: `+55119${String(50_000_000 + n)}`, template: 'outage', language: 'en', variables: { '1': String(n) } },
          });
          replies.push(reply);
          if (reply.status === 202) accepted.push(reply.body.id);
          else await sleep(20);
        } catch (error) {
          refusedConnections.push(String(error));
          await sleep(20);
        }
      }
    });

    t.after(() => {
      sending = false; // a failed assertion must not leave the load running
    });
    await sleep(1000);
    cluster.stop();
    const stoppedAt = Date.now();
    await sleep(2500);
    const duringOutage = replies.filter((reply) => reply.status !== 202);
    const ready = await call(service.url, 'GET', '/readyz');
    assert.equal(ready.status, 503, 'not ready while the database is away');
    assert.equal(service.child.exitCode, null, `svc is still running:\n${service.output()}`);

    cluster.start();
    const backAt = Date.now();
    let recoveredAt: number | undefined;
    while (Date.now() - backAt < 30_000) {
      const probe = await call(service.url, 'GET', '/readyz');
      const before = accepted.length;
      await sleep(50);
      if (probe.status === 200 && accepted.length > before) {
        recoveredAt = Date.now();
        break;
      }
    }
    sending = false;
    await Promise.all(load);
    assert.ok(recoveredAt, 'svc recovered by itself');
    t.diagnostic(
      `outage ${backAt - stoppedAt} ms; accepted ${accepted.length}; answered during the outage: ${duringOutage.length} ` +
        `(${[...new Set(duringOutage.map((reply) => reply.status))].join(', ')}); ` +
        `ready and accepting again ${recoveredAt! - backAt} ms after the database was back`,
    );

    assert.deepEqual(refusedConnections, [], 'no connection was reset or refused');
    assert.ok(duringOutage.length > 0, 'requests were answered during the outage');
    for (const reply of replies.filter((candidate) => candidate.status !== 202)) {
      assert.equal(reply.status, 503, reply.text);
      assert.equal(reply.headers.get('content-type'), 'application/problem+json');
      assert.equal(reply.body.code, 'unavailable');
      assert.ok(reply.headers.get('retry-after'), 'Retry-After');
      assert.equal(reply.headers.get('x-request-id'), reply.body.requestId);
    }
    assert.equal(service.child.exitCode, null, 'svc never exited');

    // Every 202 is in the database and goes on to its final state.
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      const deadline = Date.now() + 30_000;
      let rows: { id: string; status: string }[] = [];
      while (Date.now() < deadline) {
        rows = (await client.query<{ id: string; status: string }>('select id, status from messages where id = any($1)', [accepted])).rows;
        if (rows.length === accepted.length && rows.every((row) => row.status === 'READ')) break;
        await sleep(200);
      }
      assert.equal(rows.length, accepted.length, 'every accepted message exists');
      assert.deepEqual(
        rows.filter((row) => row.status !== 'READ'),
        [],
        'every accepted message was sent and reached READ after the outage',
      );
    } finally {
      await client.end();
    }
  });
});
