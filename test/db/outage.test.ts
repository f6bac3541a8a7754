import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { call, type Reply } from '../support/http.ts';
import { until } from '../support/until.ts';
import { createPrivatePostgres, type PrivatePostgres, privatePostgresUnavailable } from '../support/privatePostgres.ts';
import { startServiceProcess, type ServiceProcess } from '../support/process.ts';
import { senderAt } from '../support/sending.ts';
import { TEST_ENCRYPTION_KEY } from '../support/server.ts';
import { signatureOf } from '../../src/providers/whatsapp/webhook.ts';
import { FAKE_WABA_ID, type FakeGraphApi, startFakeGraphApi, systemUserToken } from '../support/fakeGraphApi.ts';
import { APP_SECRET, CREDENTIALS, PHONE_NUMBER_ID, templateWebhook, TOKEN, WEBHOOK, whatsappEnv } from '../support/whatsapp.ts';

// The database restarts under load (a fast shutdown terminates every session with 57P01, then
// connections are refused until it is back): svc must not crash, must answer 503 problem+json
// meanwhile, must recover by itself, and must lose nothing it accepted. Runs wherever the
// PostgreSQL half of the suite runs (always in CI).

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a PostgreSQL restart under load', { skip: !process.env.SVC_TEST_POSTGRES_URL }, () => {
  let cluster: PrivatePostgres;
  let service: ServiceProcess;
  let once: ServiceProcess | undefined;
  let fake: FakeGraphApi | undefined;

  before(() => {
    const why = privatePostgresUnavailable();
    if (why) throw new Error(`the outage test needs a private PostgreSQL cluster: ${why}`);
    cluster = createPrivatePostgres();
    cluster.start();
  });

  after(async () => {
    await service?.stop('SIGTERM');
    await once?.stop('SIGTERM');
    await fake?.close();
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

  it('sends every message to the provider once through a 10 s outage under load', { timeout: 180_000 }, async (t) => {
    // A database of its own in the cluster, and Meta's API (the fake) answering every send after
    // 200 ms, so that many submissions are in flight when the database goes away: the provider
    // accepts them, and their outcomes cannot be committed.
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('create database sends_once');
    await admin.end();
    const url = cluster.url.replace(/\/postgres$/, '/sends_once');
    fake = await startFakeGraphApi();
    fake.addPhoneNumber(FAKE_WABA_ID, PHONE_NUMBER_ID);
    fake.tokens.set(TOKEN, systemUserToken([FAKE_WABA_ID]));
    fake.sendLatencyMs = 200;
    once = await startServiceProcess({
      ...whatsappEnv(fake),
      SVC_DATABASE_URL: url,
      SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      SVC_LOG_LEVEL: 'info',
      SVC_SIGNUP_RATE_LIMIT: '100000',
    });
    const base = once.url;
    const project = await call(base, 'POST', '/v1/projects', { body: { name: 'Once', ownerEmail: 'owner@example.com' } });
    assert.equal(project.status, 200, project.text);
    const key: string = project.body.apiKey;
    const saved = await call(base, 'PUT', CREDENTIALS, {
      key,
      body: { providerPhoneNumberId: PHONE_NUMBER_ID, providerAccessToken: TOKEN, providerBusinessAccountId: FAKE_WABA_ID },
    });
    assert.equal(saved.status, 200, saved.text);
    const template = await call(base, 'POST', '/v1/templates', {
      key,
      body: { name: 'once', language: 'en', category: 'UTILITY', components: [{ type: 'BODY', text: 'Your code is {{1}} today.' }] },
    });
    assert.equal(template.status, 200, template.text);
    const providerTemplate = await until('the template at Meta', () => fake!.templateNamed('once', 'en'));
    fake.review(providerTemplate.id, 'APPROVED');
    const approval = JSON.stringify(templateWebhook(providerTemplate.id, 'APPROVED'));
    const approved = await call(base, 'POST', WEBHOOK, {
      raw: approval,
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signatureOf(approval, APP_SECRET) },
    });
    assert.equal(approved.status, 200, approved.text);
    await until('the template approved', async () => (await call(base, 'GET', `/v1/templates/${template.body.id}`, { key })).body.status === 'APPROVED');

    const accepted: string[] = [];
    let sending = true;
    let i = 0;
    const load = Array.from({ length: 8 }, async () => {
      while (sending) {
        const n = i++;
        const reply = await call(base, 'POST', '/v1/messages', {
          key,
          body: { to: `+55119${String(60_000_000 + n)}`, template: 'once', language: 'en', variables: { '1': String(n) } },
        }).catch(() => undefined);
        if (reply?.status === 202) accepted.push(reply.body.id);
        else await sleep(20);
      }
    });
    t.after(() => {
      sending = false;
    });
    // Under load, sends in flight: the database stops for 10 s, then comes back.
    await until('sends in flight', () => fake!.sends().length >= 50);
    cluster.stop();
    await sleep(10_000);
    cluster.start();
    await until('messages accepted again', async () => {
      const before = accepted.length;
      await sleep(100);
      return accepted.length > before;
    }, 60_000);
    await sleep(1000);
    sending = false;
    await Promise.all(load);

    // Once every accepted message has left QUEUED, none can be claimed and sent again.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await until(
        'every accepted message sent',
        async () => {
          const rows = await client.query<{ n: number }>(
            "select count(*)::int as n from messages where id = any($1) and status <> 'QUEUED'",
            [accepted],
          );
          return rows.rows[0]!.n === accepted.length;
        },
        90_000,
      );
    } finally {
      await client.end();
    }
    const sendsPerMessage = new Map<string, number>();
    for (const send of fake.sends()) {
      const id = (send.body as { biz_opaque_callback_data?: string }).biz_opaque_callback_data ?? '?';
      sendsPerMessage.set(id, (sendsPerMessage.get(id) ?? 0) + 1);
    }
    const twice = [...sendsPerMessage].filter(([, n]) => n > 1);
    const metrics = await call(base, 'GET', '/metrics');
    const kept = /svc_dispatch_outcomes_deferred_total (\d+)/.exec(metrics.text)?.[1];
    t.diagnostic(`accepted ${accepted.length}; submissions ${fake.sends().length}; outcomes kept through the outage ${kept}; sent twice ${twice.length}`);
    assert.deepEqual(twice, [], 'no message was submitted to the provider twice');
    for (const id of accepted) assert.ok(sendsPerMessage.has(id), `${id} was submitted`);
    assert.ok(Number(kept) > 0, 'some outcomes were kept through the outage (the test made the case it is about)');
    assert.equal(once.child.exitCode, null, 'svc never exited');
  });
});
