import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { queuedMessageRow } from '../src/db/messages.ts';
import { recordWorkerHeartbeat } from '../src/db/workerHeartbeats.ts';
import { prettyLine } from '../src/logger.ts';
import { createTestDatabase, databaseKinds } from './support/databases.ts';
import { call } from './support/http.ts';
import { runSvc, startServiceProcess } from './support/process.ts';
import { senderAt, waitForStatus } from './support/sending.ts';
import { startTestServer, TEST_ENCRYPTION_KEY } from './support/server.ts';

// What an operator meets: the operator port of every role, readiness that notices idle workers,
// the pipeline's metrics, start-up errors in one line, and logs a person can read.

for (const kind of databaseKinds()) {
  describe(`operating svc (${kind})`, () => {
    it('serves metrics and health on the operator port, with the message pipeline’s metrics', async () => {
      const server = await startTestServer(kind, {
        env: { SVC_SANDBOX_DELIVERY_DELAY_MS: '20', SVC_SANDBOX_READ_DELAY_MS: '20' },
      });
      try {
        const ops = server.app.opsUrl!;
        assert.ok(ops, 'the operator port is on by default');
        assert.notEqual(ops, server.url);
        const sender = await senderAt(server.url);
        const sent = await server.call('POST', '/v1/messages', {
          key: sender.key,
          body: { to: '+5511987654321', template: sender.templateName, language: sender.language, variables: { '1': 'Ana', '2': 'A-1' } },
        });
        assert.equal(sent.status, 202);
        await waitForStatus(server, sender.key, sent.body.id, 'READ');
        assert.equal((await call(ops, 'GET', '/healthz')).status, 200);
        assert.equal((await call(ops, 'GET', '/readyz')).status, 200);
        const metrics = await call(ops, 'GET', '/metrics');
        assert.equal(metrics.status, 200);
        for (const name of [
          'svc_dispatch_submissions_total{outcome="accepted"} 1',
          'svc_provider_submission_duration_seconds_count{outcome="accepted"} 1',
          'svc_dispatch_in_flight',
          'svc_messages_queued',
          'svc_messages_oldest_due_age_seconds',
          'svc_message_status_changes_total{status="READ"}',
        ]) {
          assert.ok(metrics.text.includes(name), `${name} in\n${metrics.text.slice(0, 300)}`);
        }
        const unknown = await call(ops, 'GET', '/v1/projects/me');
        assert.equal(unknown.status, 404, 'the operator port serves no API');
        assert.equal(unknown.headers.get('content-type'), 'application/problem+json');
      } finally {
        await server.close();
      }
    });

    it('reports not ready when due messages wait and no worker claims them', async () => {
      const database = await createTestDatabase(kind);
      const config = loadConfig({
        SVC_DATABASE_URL: database.url,
        SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        SVC_LOG_LEVEL: 'silent',
        SVC_WORKER_STALL_MS: '2000',
        HOST: '127.0.0.1',
        PORT: '0',
      });
      const api = await createApp(config, { role: 'api' });
      const url = (await api.start())!;
      try {
        const sender = await senderAt(url);
        assert.equal((await call(url, 'GET', '/readyz')).status, 200, 'nothing is due');
        const row = queuedMessageRow(
          {
            projectId: sender.projectId,
            to: '+5511987654321',
            template: { id: sender.templateId, name: sender.templateName, language: sender.language, category: 'UTILITY' },
            variables: { '1': 'Ana', '2': 'A-1' },
            content: { body: 'x' },
          },
          Date.now() - 10_000,
        );
        await api.database.db.insertInto('messages').values(row).execute();
        const stalled = await call(url, 'GET', '/readyz');
        assert.equal(stalled.status, 503);
        assert.equal(stalled.body.code, 'unavailable');
        assert.match(stalled.body.detail, /No worker has claimed due messages/);
        assert.equal((await call(api.opsUrl!, 'GET', '/readyz')).status, 503, 'the operator port says the same');

        // A worker that is alive and looking for work (pacing a backlog, say) is not a stall.
        await recordWorkerHeartbeat(api.database.db, 'worker-1', Date.now());
        assert.equal((await call(url, 'GET', '/readyz')).status, 200);
      } finally {
        await api.stop();
        await database.drop();
      }
    });

    it('gives the worker role an operator port too', async () => {
      const database = await createTestDatabase(kind);
      const worker = await startServiceProcess(
        { SVC_DATABASE_URL: database.url, SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY },
        ['serve', '--role', kind === 'postgres' ? 'worker' : 'all'],
      );
      try {
        const opsUrl = /"opsUrl":"(http:\/\/[^"]+)"/.exec(worker.output())?.[1];
        assert.ok(opsUrl, worker.output());
        const metrics = await call(opsUrl, 'GET', '/metrics');
        assert.equal(metrics.status, 200);
        assert.match(metrics.text, /svc_dispatch_in_flight 0/);
        assert.equal((await call(opsUrl, 'GET', '/healthz')).status, 200);
      } finally {
        await worker.stop();
        await database.drop();
      }
    });
  });
}

describe('start-up errors are one line an operator can act on', () => {
  it('names a port already in use', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const folder = mkdtempSync(join(tmpdir(), 'svc-start-'));
    try {
      const result = await runSvc(['serve'], {
        PORT: String(port),
        SVC_OPS_PORT: '0',
        SVC_DATABASE_URL: `sqlite:${join(folder, 'svc.db')}`,
      });
      assert.equal(result.code, 1);
      assert.match(result.output, new RegExp(`svc: cannot listen on 127\\.0\\.0\\.1:${port}: it is already in use`));
      assert.doesNotMatch(result.output, /\n\s+at /, 'no stack trace');
    } finally {
      blocker.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('names a database it cannot reach, without its password', async () => {
    const result = await runSvc(['serve'], {
      PORT: '0',
      SVC_DATABASE_URL: 'postgres://svc:hunter2@127.0.0.1:1/svc',
      SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    });
    assert.equal(result.code, 1);
    assert.match(result.output, /svc: cannot reach the database at postgres:\/\/svc@127\.0\.0\.1:1\/svc: ECONNREFUSED/);
    assert.doesNotMatch(result.output, /hunter2/);
  });

  it('refuses a wrong configuration before it writes any file', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-start-'));
    try {
      const result = await runSvc(['serve'], {
        PORT: '0',
        SVC_PROVIDER: 'whatsapp',
        SVC_DATABASE_URL: `sqlite:${join(folder, 'data', 'svc.db')}`,
      });
      assert.equal(result.code, 1);
      assert.match(result.output, /svc: configuration: SVC_PROVIDER=whatsapp needs SVC_WHATSAPP_APP_SECRET/);
      assert.equal(existsSync(join(folder, 'data')), false, 'no database folder or file was created');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('refuses PostgreSQL without an encryption key before it migrates anything', { skip: !process.env.SVC_TEST_POSTGRES_URL }, async () => {
    const database = await createTestDatabase('postgres');
    const result = await runSvc(['serve'], { SVC_DATABASE_URL: database.url, PORT: '0' });
    assert.equal(result.code, 1);
    assert.match(result.output, /configuration: SVC_ENCRYPTION_KEY is required with PostgreSQL/);
    const db = openDatabase(database.url, { poolSize: 1 });
    try {
      const tables = await sql<{ n: number | string }>`
        select count(*) as n from information_schema.tables where table_schema = current_schema()`.execute(db.db);
      assert.equal(Number(tables.rows[0]!.n), 0, 'the schema is untouched');
    } finally {
      await db.close();
    }
  });
});

describe('logs for people', () => {
  it('writes time, level, message and fields when stdout is a terminal (or SVC_LOG_FORMAT=pretty)', async () => {
    const line = prettyLine(
      JSON.stringify({ level: 40, time: Date.UTC(2026, 10, 24, 10, 0, 0, 5), msg: 'webhook attempt failed', deliveryId: 'd1', status: 500 }),
    );
    assert.match(line, /^10:00:00\.005 \S*WARN \S* webhook attempt failed deliveryId=d1 status=500\n$/);
    const folder = mkdtempSync(join(tmpdir(), 'svc-log-'));
    const child = spawn(process.execPath, [fileURLToPath(new URL('../src/main.ts', import.meta.url)), 'serve'], {
      env: { PATH: process.env.PATH, PORT: '0', SVC_OPS_PORT: '0', SVC_LOG_FORMAT: 'pretty', SVC_DATABASE_URL: `sqlite:${join(folder, 'svc.db')}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let output = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start line:\n${output}`)), 20_000);
        child.stdout.on('data', (chunk) => {
          output += chunk;
          if (output.includes('svc started')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      assert.match(output, /\d\d:\d\d:\d\d\.\d{3} INFO\s+svc started role=all url=http:\/\/127\.0\.0\.1:\d+/);
      assert.doesNotMatch(output, /^\{"level"/m, 'no JSON lines');
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
