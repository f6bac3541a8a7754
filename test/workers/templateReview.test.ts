import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { listTemplateStatusEvents } from '../../src/db/templates.ts';
import { Notifier } from '../../src/workers/notifier.ts';
import { applyTemplateReview } from '../../src/workers/templateReview.ts';
import { createTestDatabase, databaseKinds } from '../support/databases.ts';
import { call } from '../support/http.ts';
import { startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from '../support/server.ts';

const FAST = { SVC_SANDBOX_REVIEW_DELAY_MS: '50' };
const SLOW = { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' };
const GOOD_BODY = 'Hello {{1}}, your order {{2}} has shipped.';

function template(name: string, text = GOOD_BODY) {
  return { name, language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text }] };
}

/** Polls until the template leaves PENDING (or fails the test after `timeoutMs`). */
async function waitForReview(baseUrl: string, key: string, id: string, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    last = await call(baseUrl, 'GET', `/v1/templates/${id}`, { key });
    assert.equal(last.status, 200, last.text);
    if (last.body.status !== 'PENDING') return last.body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.fail(`template ${id} was not reviewed; last: ${JSON.stringify(last?.body)}`);
}

async function eventsOf(server: TestServer, projectId: string, id: string) {
  const rows = await listTemplateStatusEvents(server.app.database.db, projectId, id);
  return rows.map((row) => ({ from: row.from_status, to: row.to_status, reason: row.reason, occurredAt: row.occurred_at }));
}

for (const kind of databaseKinds()) {
  describe(`Template review (${kind})`, () => {
    describe('by the sandbox', () => {
      let server: TestServer;
      before(async () => {
        server = await startTestServer(kind, { env: FAST });
      });
      after(() => server.close());

      it('approves a template after the review delay and records both status changes', async () => {
        const { key, projectId } = await server.createProject();
        const created = await server.call('POST', '/v1/templates', { key, body: template('order_update') });
        assert.equal(created.body.status, 'PENDING');
        const reviewed = await waitForReview(server.url, key, created.body.id);
        assert.equal(reviewed.status, 'APPROVED');
        assert.ok(!('rejectionReason' in reviewed));
        assert.ok(reviewed.updatedAt >= created.body.createdAt);
        assert.equal(reviewed.createdAt, created.body.createdAt);
        const events = await eventsOf(server, projectId, created.body.id);
        assert.deepEqual(
          events.map(({ from, to, reason }) => ({ from, to, reason })),
          [
            { from: null, to: 'PENDING', reason: null },
            { from: 'PENDING', to: 'APPROVED', reason: null },
          ],
        );
        assert.equal(events[0]!.occurredAt, Date.parse(created.body.createdAt));
        assert.ok(events[1]!.occurredAt >= events[0]!.occurredAt);
        const row = await server.app.database.db
          .selectFrom('templates')
          .select(['review_due_at', 'lease_expires_at'])
          .where('id', '=', created.body.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual({ ...row }, { review_due_at: null, lease_expires_at: null }, 'off the review queue');
      });

      it('rejects by each review rule, with a rejectionReason saying why', async () => {
        const { key, projectId } = await server.createProject();
        const cases: [ReturnType<typeof template>, RegExp][] = [
          [template('reject_this'), /starts with "reject_"/],
          [template('starts_with_placeholder', '{{1}} is your code, thanks'), /starts with the placeholder \{\{1\}\}/],
          [template('ends_with_placeholder', 'Thanks, your code is {{1}}  '), /ends with the placeholder \{\{1\}\}/],
          [template('too_many_placeholders', 'Code {{1}} {{2}} {{3}} now'), /3 placeholder\(s\) need at least 3 words.*has 2/],
          [template('placeholders_first', '{{1}} {{2}} {{3}} ok'), /starts with the placeholder \{\{1\}\}/],
        ];
        const ids: string[] = [];
        for (const [body] of cases) {
          const created = await server.call('POST', '/v1/templates', { key, body });
          assert.equal(created.status, 200, created.text);
          ids.push(created.body.id);
        }
        for (const [index, [, reason]] of cases.entries()) {
          const reviewed = await waitForReview(server.url, key, ids[index]!);
          assert.equal(reviewed.status, 'REJECTED', reviewed.name);
          assert.match(reviewed.rejectionReason, reason);
          const events = await eventsOf(server, projectId, ids[index]!);
          assert.deepEqual(
            events.map(({ from, to }) => [from, to]),
            [
              [null, 'PENDING'],
              ['PENDING', 'REJECTED'],
            ],
          );
          assert.equal(events[1]!.reason, reviewed.rejectionReason);
        }
        const list = (await server.call('GET', '/v1/templates', { key })).body;
        assert.ok(list.every((item: any) => item.status === 'REJECTED' && item.rejectionReason));
      });

      it('approves short bodies that have no more placeholders than words', async () => {
        const { key } = await server.createProject();
        for (const [name, text] of [
          ['hello_short', 'Hello {{1}}!'],
          ['code_short', 'Hi {{1}}, your code is {{2}}.'],
        ]) {
          const created = await server.call('POST', '/v1/templates', { key, body: template(name!, text) });
          assert.equal(created.status, 200, created.text);
          const reviewed = await waitForReview(server.url, key, created.body.id);
          assert.equal(reviewed.status, 'APPROVED', `${text}: ${reviewed.rejectionReason}`);
        }
      });

      it('applies a review once: duplicates and contradicting reports change nothing', async () => {
        const { key, projectId } = await server.createProject();
        const created = (await server.call('POST', '/v1/templates', { key, body: template('once_only') })).body;
        await waitForReview(server.url, key, created.id);
        const deps = { database: server.app.database, notifier: new Notifier(server.app.database, server.app.logger), logger: server.app.logger };
        const report = { kind: 'template' as const, templateId: created.id, occurredAt: Date.now() };
        assert.equal(await applyTemplateReview(deps, { ...report, status: 'APPROVED' }), 'unchanged');
        assert.equal(await applyTemplateReview(deps, { ...report, status: 'REJECTED', reason: 'late' }), 'unchanged');
        assert.equal(await applyTemplateReview(deps, { ...report, templateId: 'tpl_unknown', status: 'APPROVED' }), 'unknown');
        const read = (await server.call('GET', `/v1/templates/${created.id}`, { key })).body;
        assert.equal(read.status, 'APPROVED');
        assert.equal((await eventsOf(server, projectId, created.id)).length, 2);
      });

      it('drops the review of a template deleted while PENDING', async () => {
        const slow = await startTestServer(kind, { database: server.database, env: SLOW });
        try {
          const { key } = await slow.createProject();
          const created = (await slow.call('POST', '/v1/templates', { key, body: template('deleted_early') })).body;
          assert.equal((await slow.call('DELETE', `/v1/templates/${created.id}`, { key })).status, 200);
          const events = await slow.app.database.db
            .selectFrom('template_status_events')
            .selectAll()
            .where('template_id', '=', created.id)
            .execute();
          assert.deepEqual(events, [], 'its history goes with it');
          const deps = { database: slow.app.database, notifier: new Notifier(slow.app.database, slow.app.logger), logger: slow.app.logger };
          const result = await applyTemplateReview(deps, {
            kind: 'template',
            templateId: created.id,
            status: 'APPROVED',
            occurredAt: Date.now(),
          });
          assert.equal(result, 'unknown');
        } finally {
          await slow.app.stop();
        }
      });
    });

    describe('durability', () => {
      it('reviews after a restart a template that was PENDING when the process stopped', async () => {
        // Reviews are an hour away while the first process runs, so it surely stops before one.
        const first = await startTestServer(kind, { env: SLOW });
        const { key } = await first.createProject();
        const created = (await first.call('POST', '/v1/templates', { key, body: template('survives_restart') })).body;
        await first.app.stop();
        let second: TestServer | undefined;
        try {
          // The hour passes while the service is down.
          const database = openDatabase(first.database.url, { poolSize: 1 });
          try {
            const row = await database.db
              .selectFrom('templates')
              .select(['status', 'review_due_at'])
              .where('id', '=', created.id)
              .executeTakeFirstOrThrow();
            assert.equal(row.status, 'PENDING');
            assert.ok(row.review_due_at !== null && row.review_due_at > Date.now());
            await database.db.updateTable('templates').set({ review_due_at: Date.now() - 1 }).where('id', '=', created.id).execute();
          } finally {
            await database.close();
          }
          second = await startTestServer(kind, { database: first.database, env: SLOW });
          const reviewed = await waitForReview(second.url, key, created.id);
          assert.equal(reviewed.status, 'APPROVED');
        } finally {
          await second?.close();
          await first.database.drop();
        }
      });

      it('reviews templates registered through an API-only process once a worker starts', async () => {
        const testDatabase = await createTestDatabase(kind);
        const config = loadConfig({
          SVC_LOG_LEVEL: 'silent',
          SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
          HOST: '127.0.0.1',
          PORT: '0',
          SVC_DATABASE_URL: testDatabase.url,
          ...FAST,
        });
        const api = await createApp(config, { role: 'api' });
        let worker: TestServer | undefined;
        try {
          const url = (await api.start())!;
          const project = (await call(url, 'POST', '/v1/projects', { body: { name: 'api only', ownerEmail: 'a@example.com' } })).body;
          const created = (await call(url, 'POST', '/v1/templates', { key: project.apiKey, body: template('api_only') })).body;
          // Overdue, yet nobody here reviews: this process runs no workers.
          await new Promise((resolve) => setTimeout(resolve, 150));
          const still = await call(url, 'GET', `/v1/templates/${created.id}`, { key: project.apiKey });
          assert.equal(still.body.status, 'PENDING');
          await api.stop();
          worker = await startTestServer(kind, { database: testDatabase, env: FAST });
          const reviewed = await waitForReview(worker.url, project.apiKey, created.id);
          assert.equal(reviewed.status, 'APPROVED');
        } finally {
          await api.stop().catch(() => {});
          await worker?.close();
          await testDatabase.drop();
        }
      });
    });

    describe('test helper', () => {
      let server: TestServer;
      before(async () => {
        server = await startTestServer(kind, { env: SLOW });
      });
      after(() => server.close());

      const review = (key: string, id: string, body: unknown) =>
        server.call('POST', `/v1/test-helpers/templates/${id}/review`, { key, body });

      it('approves a PENDING template at once, through the provider path', async () => {
        const { key, projectId } = await server.createProject();
        const created = (await server.call('POST', '/v1/templates', { key, body: template('helper_approve') })).body;
        const reviewed = await review(key, created.id, { status: 'APPROVED' });
        assert.equal(reviewed.status, 200, reviewed.text);
        assert.equal(reviewed.body.id, created.id);
        assert.equal(reviewed.body.status, 'APPROVED');
        assert.deepEqual(reviewed.body.components, created.components);
        assert.deepEqual((await server.call('GET', `/v1/templates/${created.id}`, { key })).body, reviewed.body);
        const events = await eventsOf(server, projectId, created.id);
        assert.deepEqual(
          events.map(({ from, to }) => [from, to]),
          [
            [null, 'PENDING'],
            ['PENDING', 'APPROVED'],
          ],
        );
      });

      it('rejects with the given reason, or a default one', async () => {
        const { key } = await server.createProject();
        const a = (await server.call('POST', '/v1/templates', { key, body: template('helper_reason') })).body;
        const b = (await server.call('POST', '/v1/templates', { key, body: template('helper_default') })).body;
        const withReason = await review(key, a.id, { status: 'REJECTED', reason: 'Contains a URL shortener.' });
        assert.equal(withReason.body.status, 'REJECTED');
        assert.equal(withReason.body.rejectionReason, 'Contains a URL shortener.');
        const withDefault = await review(key, b.id, { status: 'REJECTED' });
        assert.equal(withDefault.body.rejectionReason, 'Rejected with the sandbox test helper.');
      });

      it('answers a repeat of the same review with the template as it is (idempotent)', async () => {
        const { key, projectId } = await server.createProject();
        const approved = (await server.call('POST', '/v1/templates', { key, body: template('helper_twice') })).body;
        const first = await review(key, approved.id, { status: 'APPROVED' });
        assert.equal(first.status, 200);
        for (const body of [{ status: 'APPROVED' }, { status: 'APPROVED', reason: 'ignored' }]) {
          const again = await review(key, approved.id, body);
          assert.equal(again.status, 200, again.text);
          assert.deepEqual(again.body, first.body);
        }
        assert.equal((await eventsOf(server, projectId, approved.id)).length, 2, 'no new status change');

        const rejected = (await server.call('POST', '/v1/templates', { key, body: template('helper_twice_no') })).body;
        const no = await review(key, rejected.id, { status: 'REJECTED', reason: 'First reason.' });
        assert.equal(no.status, 200);
        for (const body of [{ status: 'REJECTED' }, { status: 'REJECTED', reason: 'Another reason.' }]) {
          const again = await review(key, rejected.id, body);
          assert.equal(again.status, 200, again.text);
          assert.deepEqual(again.body, no.body);
          assert.equal(again.body.rejectionReason, 'First reason.');
        }
        assert.equal((await eventsOf(server, projectId, rejected.id)).length, 2, 'no new status change');
      });

      it('answers 409 template_not_pending for a contradicting review, changing nothing', async () => {
        const { key, projectId } = await server.createProject();
        const approved = (await server.call('POST', '/v1/templates', { key, body: template('helper_contra') })).body;
        assert.equal((await review(key, approved.id, { status: 'APPROVED' })).status, 200);
        const late = await review(key, approved.id, { status: 'REJECTED', reason: 'late' });
        assert.equal(late.status, 409);
        assert.equal(late.body.code, 'template_not_pending');
        assert.match(late.body.detail, /already APPROVED/);
        assert.equal((await server.call('GET', `/v1/templates/${approved.id}`, { key })).body.status, 'APPROVED');
        assert.equal((await eventsOf(server, projectId, approved.id)).length, 2);

        const rejected = (await server.call('POST', '/v1/templates', { key, body: template('helper_contra_no') })).body;
        assert.equal((await review(key, rejected.id, { status: 'REJECTED' })).status, 200);
        const approve = await review(key, rejected.id, { status: 'APPROVED' });
        assert.equal(approve.status, 409);
        assert.equal(approve.body.code, 'template_not_pending');
        assert.match(approve.body.detail, /already REJECTED/);
        assert.equal((await server.call('GET', `/v1/templates/${rejected.id}`, { key })).body.status, 'REJECTED');
        assert.equal((await eventsOf(server, projectId, rejected.id)).length, 2);
      });

      it('ignores a reason sent with APPROVED', async () => {
        const { key } = await server.createProject();
        const created = (await server.call('POST', '/v1/templates', { key, body: template('helper_approve_reason') })).body;
        const reviewed = await review(key, created.id, { status: 'APPROVED', reason: 'Looks fine.' });
        assert.equal(reviewed.status, 200, reviewed.text);
        assert.equal(reviewed.body.status, 'APPROVED');
        assert.ok(!('rejectionReason' in reviewed.body));
      });

      it('validates its body and answers 404 for unknown ids', async () => {
        const { key } = await server.createProject();
        const created = (await server.call('POST', '/v1/templates', { key, body: template('helper_bad') })).body;
        const cases: [unknown, string][] = [
          [{}, '/status'],
          [{ status: 'PENDING' }, '/status'],
          [{ status: 'approved' }, '/status'],
          [{ status: 'REJECTED', reason: '' }, '/reason'],
          [{ status: 'REJECTED', reason: 'x'.repeat(1001) }, '/reason'],
          [{ status: 'APPROVED', extra: 1 }, '/extra'],
        ];
        for (const [body, field] of cases) {
          const reply = await review(key, created.id, body);
          assert.equal(reply.status, 400, JSON.stringify(body));
          assert.equal(reply.body.code, 'validation_failed');
          assert.equal(reply.body.errors[0].field, field, JSON.stringify(body));
        }
        assert.equal((await server.call('GET', `/v1/templates/${created.id}`, { key })).body.status, 'PENDING');
        const unknown = await review(key, 'tpl_00000000000000000000000000', { status: 'APPROVED' });
        assert.equal(unknown.status, 404);
        assert.equal(unknown.body.code, 'not_found');
      });

      it('does not exist under another provider', async () => {
        const whatsapp = await startTestServer(kind, {
          env: {
            SVC_PROVIDER: 'whatsapp',
            SVC_WHATSAPP_GRAPH_URL: 'http://127.0.0.1:9',
            SVC_WHATSAPP_APP_SECRET: 'app-secret',
            SVC_WHATSAPP_VERIFY_TOKEN: 'verify-token',
          },
        });
        try {
          const { key } = await whatsapp.createProject();
          const reply = await whatsapp.call('POST', '/v1/test-helpers/templates/tpl_00000000000000000000000000/review', {
            key,
            body: { status: 'APPROVED' },
          });
          assert.equal(reply.status, 404);
          assert.equal(reply.body.code, 'not_found');
          const doc = await whatsapp.call('GET', '/openapi.json');
          assert.ok(!doc.body.paths['/v1/test-helpers/templates/{id}/review'], 'nor in the OpenAPI document');
        } finally {
          await whatsapp.close();
        }
      });
    });
  });
}
