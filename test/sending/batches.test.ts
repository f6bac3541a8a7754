import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { nextPageOf } from '../support/http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { createSender, type Sender } from '../support/sending.ts';
import { until } from '../support/until.ts';

const FAST = {
  SVC_SANDBOX_DELIVERY_DELAY_MS: '30',
  SVC_SANDBOX_READ_DELAY_MS: '30',
  SVC_SANDBOX_REVIEW_DELAY_MS: '3600000',
};
const VARS = { '1': 'Ana', '2': 'A-1001' };

function batchOf(sender: Sender, items: unknown[]) {
  return { template: sender.templateName, language: sender.language, items };
}

const numberAt = (i: number) => `+55119876${String(10000 + i).slice(1)}`;

for (const kind of databaseKinds()) {
  describe(`batch sends (${kind})`, () => {
    let server: TestServer;
    let sender: Sender;
    before(async () => {
      server = await startTestServer(kind, { env: FAST });
      sender = await createSender(server);
    });
    after(() => server.close());

    it('answers each item in request order, accepts the good ones together, and counts them by status', async () => {
      const suppressed = await server.call('POST', '/v1/suppressions', { key: sender.key, body: { phoneNumber: '+5511900000009' } });
      assert.equal(suppressed.status, 201, suppressed.text);
      const sendAt = new Date(Date.now() + 60_000).toISOString();
      const reply = await server.call('POST', '/v1/messages/batch', {
        key: sender.key,
        body: batchOf(sender, [
          { to: '+5511987654321', variables: VARS },
          { to: 'not-a-number', variables: VARS },
          { to: '+5511987654322', variables: { '1': 'Ana' } },
          { to: '+5511900000009', variables: VARS },
          { to: '+5511987654323', variables: VARS, sendAt },
          { to: '+5511987654324', variables: VARS, sendAt: '2001-01-01T00:00:00Z' },
        ]),
      });
      assert.equal(reply.status, 202, reply.text);
      const { batchId, acceptedCount, rejectedCount, items } = reply.body;
      assert.match(batchId, /^bat_[0-9a-z]{26}$/);
      assert.equal(acceptedCount, 2);
      assert.equal(rejectedCount, 4);
      assert.deepEqual(
        items.map((item: any) => [item.index, item.status, item.error?.code ?? item.message.status]),
        [
          [0, 202, 'QUEUED'],
          [1, 400, 'validation_failed'],
          [2, 422, 'template_variables_mismatch'],
          [3, 422, 'recipient_suppressed'],
          [4, 202, 'QUEUED'],
          [5, 422, 'send_at_out_of_range'],
        ],
      );
      assert.equal(items[1].error.errors[0].field, '/items/1/to');
      assert.equal(items[5].error.errors[0].field, '/items/5/sendAt');
      assert.equal(items[0].message.batchId, batchId);
      assert.equal(items[4].message.scheduledFor, sendAt);
      assert.equal(items[1].error.requestId, reply.headers.get('x-request-id'));

      const listed = await server.call('GET', `/v1/messages?batchId=${batchId}`, { key: sender.key });
      assert.equal(listed.status, 200);
      assert.deepEqual(
        listed.body.map((message: any) => message.id),
        [items[4].message.id, items[0].message.id],
        'the batch’s messages, newest first',
      );
      await until('the unscheduled message READ', async () => {
        const batch = await server.call('GET', `/v1/batches/${batchId}`, { key: sender.key });
        return batch.body.counts.READ === 1 && batch.body;
      });
      const batch = await server.call('GET', `/v1/batches/${batchId}`, { key: sender.key });
      assert.deepEqual(batch.body, {
        id: batchId,
        template: sender.templateName,
        language: sender.language,
        createdAt: batch.body.createdAt,
        total: 2,
        counts: { QUEUED: 1, SENT: 0, DELIVERED: 0, READ: 1, FAILED: 0, CANCELED: 0 },
      });
      const canceled = await server.call('POST', `/v1/messages/${items[4].message.id}/cancel`, { key: sender.key });
      assert.equal(canceled.status, 200);
      assert.equal((await server.call('GET', `/v1/batches/${batchId}`, { key: sender.key })).body.counts.CANCELED, 1);
    });

    it('one Idempotency-Key covers the batch: a repeat is the same answer, another body is 422', async () => {
      const body = batchOf(sender, [{ to: '+5511987654321', variables: VARS }]);
      const headers = { 'idempotency-key': 'batch-key-1' };
      const first = await server.call('POST', '/v1/messages/batch', { key: sender.key, body, headers });
      assert.equal(first.status, 202, first.text);
      const again = await server.call('POST', '/v1/messages/batch', { key: sender.key, body, headers });
      assert.equal(again.status, 202);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.text, first.text);
      const other = await server.call('POST', '/v1/messages/batch', {
        key: sender.key,
        body: batchOf(sender, [{ to: '+5511987654322', variables: VARS }]),
        headers,
      });
      assert.equal(other.status, 422);
      assert.equal(other.body.code, 'idempotency_key_reused');
      const single = await server.call('POST', '/v1/messages', {
        key: sender.key,
        body: { to: '+5511987654321', template: sender.templateName, language: sender.language, variables: VARS },
        headers,
      });
      assert.equal(single.status, 422, 'a batch’s key is not a single send’s');
    });

    it('faults of the whole request are plain problems and create no batch', async () => {
      const before = (await server.call('GET', '/v1/batches?limit=200', { key: sender.key })).body.length;
      const cases: [unknown, number, string][] = [
        [{ ...batchOf(sender, [{ to: '+5511987654321', variables: VARS }]), template: 'no_such_template' }, 422, 'template_not_found'],
        [{ ...batchOf(sender, [{ to: '+5511987654321', variables: VARS }]), language: 'fr_FR' }, 422, 'template_language_mismatch'],
        [batchOf(sender, []), 400, 'validation_failed'],
        [batchOf(sender, Array.from({ length: 1001 }, (_, i) => ({ to: numberAt(i), variables: VARS }))), 400, 'validation_failed'],
        [{ template: sender.templateName, items: [] }, 400, 'validation_failed'],
      ];
      for (const [body, status, code] of cases) {
        const reply = await server.call('POST', '/v1/messages/batch', { key: sender.key, body });
        assert.equal(reply.status, status, reply.text);
        assert.equal(reply.body.code, code);
      }
      const broken = await server.call('POST', '/v1/messages/batch', {
        key: sender.key,
        raw: '{"items":[',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(broken.status, 400);
      assert.equal((await server.call('GET', '/v1/batches?limit=200', { key: sender.key })).body.length, before);
    });

    it('batches are listed newest first and paged; another project’s batch is 404 and its filter finds nothing', async () => {
      for (let i = 0; i < 3; i++) {
        const reply = await server.call('POST', '/v1/messages/batch', {
          key: sender.key,
          body: batchOf(sender, [{ to: numberAt(i), variables: VARS }]),
        });
        assert.equal(reply.status, 202, reply.text);
      }
      const page = await server.call('GET', '/v1/batches?limit=2', { key: sender.key });
      assert.equal(page.status, 200);
      assert.equal(page.body.length, 2);
      assert.ok(page.body[0].id > page.body[1].id);
      const next = nextPageOf(page);
      assert.ok(next);
      const second = await server.call('GET', next, { key: sender.key });
      assert.ok(second.body[0].id < page.body[1].id);

      const other = await createSender(server, 'other_batch_template');
      assert.equal((await server.call('GET', `/v1/batches/${page.body[0].id}`, { key: other.key })).status, 404);
      assert.deepEqual((await server.call('GET', `/v1/messages?batchId=${page.body[0].id}`, { key: other.key })).body, []);
      assert.deepEqual((await server.call('GET', '/v1/batches', { key: other.key })).body, []);
      assert.equal((await server.call('GET', '/v1/batches', {})).status, 401);
    });
  });

  describe(`a 1,000-item batch (${kind})`, () => {
    it('is accepted in one request and paced per number: never more than SVC_PROVIDER_MAX_MPS in a calendar second', async (t) => {
      const server = await startTestServer(kind, { env: { ...FAST, SVC_PROVIDER_MAX_MPS: '250' } });
      try {
        const sender = await createSender(server);
        const items = Array.from({ length: 1000 }, (_, i) => ({ to: numberAt(i), variables: { '1': `Customer ${i}`, '2': `A-${i}` } }));
        const body = batchOf(sender, items);
        assert.ok(JSON.stringify(body).length > 65536, 'larger than the default body limit of other routes');
        const reply = await server.call('POST', '/v1/messages/batch', { key: sender.key, body });
        assert.equal(reply.status, 202, reply.text.slice(0, 500));
        assert.equal(reply.body.acceptedCount, 1000);
        const ids = new Set(reply.body.items.map((item: any) => item.message.id));
        const submissions = await until(
          'every message submitted',
          async () => {
            const rows = await server.app.database.db
              .selectFrom('sandbox_submissions')
              .select(['message_id', 'submitted_at'])
              .where('outcome', '=', 'accepted')
              .execute();
            const own = rows.filter((row) => ids.has(row.message_id));
            return own.length === 1000 && own;
          },
          30_000,
        );
        const perSecond = new Map<number, number>();
        for (const row of submissions) {
          const second = Math.floor(Number(row.submitted_at) / 1000);
          perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
        }
        t.diagnostic(`per calendar second: ${[...perSecond.values()].join(', ')}`);
        assert.ok(Math.max(...perSecond.values()) <= 250, `at most 250 a second: ${[...perSecond.values()].join(', ')}`);
        assert.ok(perSecond.size >= 4, 'spread over at least 4 seconds');
        const batch = await server.call('GET', `/v1/batches/${reply.body.batchId}`, { key: sender.key });
        assert.equal(batch.body.total, 1000);
      } finally {
        await server.close();
      }
    });
  });
}
