import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { approvedTemplate, createSender } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { waitUntil } from '../support/webhookEvents.ts';

const HOUR = 3_600_000;
const STATUSES = ['QUEUED', 'SENT', 'DELIVERED', 'READ', 'FAILED', 'CANCELED'];

/** Every count of every bucket, added up per key. */
function totals(buckets: { counts: Record<string, number> }[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const bucket of buckets) for (const [key, n] of Object.entries(bucket.counts)) sum[key] = (sum[key] ?? 0) + n;
  return sum;
}

for (const kind of databaseKinds()) {
  describe(`message analytics (${kind})`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(kind, {
        env: { SVC_SANDBOX_DELIVERY_DELAY_MS: '20', SVC_SANDBOX_READ_DELAY_MS: '40', SVC_SEND_RETRY_SCHEDULE: '10ms,10ms' },
      });
    });
    after(async () => server.close());

    it('counts match the messages after a run of sends through the sandbox', async () => {
      const sender = await createSender(server, 'order_update', 'en_US');
      const { key } = sender;
      await approvedTemplate(server, key, 'receipt', 'pt_BR');
      const recipients = [
        '+14155550101',
        '+14155550102',
        '+14155550103',
        '+15550000001', // SENT, then FAILED
        '+15550000002', // fails every submission: FAILED after the retries
        '+15550000003', // DELIVERED, never READ
      ];
      const sends = [];
      for (const [i, to] of recipients.entries()) {
        const pt = i % 3 === 0;
        sends.push(
          server.call('POST', '/v1/messages', {
            key,
            body: {
              to,
              template: pt ? 'receipt' : 'order_update',
              language: pt ? 'pt_BR' : 'en_US',
              variables: { '1': 'Ana', '2': `#${i}` },
            },
          }),
        );
      }
      const replies = await Promise.all(sends);
      for (const reply of replies) assert.equal(reply.status, 202, reply.text);
      // A scheduled message, canceled before it is due.
      const scheduled = await server.call('POST', '/v1/messages', {
        key,
        body: {
          to: '+14155550109',
          template: 'order_update',
          language: 'en_US',
          variables: { '1': 'Ana', '2': '#9' },
          sendAt: new Date(Date.now() + 3_600_000).toISOString(),
        },
      });
      assert.equal(scheduled.status, 202, scheduled.text);
      assert.equal((await server.call('POST', `/v1/messages/${scheduled.body.id}/cancel`, { key })).status, 200);

      const settled = (status: string, to: string) =>
        status === 'READ' || status === 'FAILED' || status === 'CANCELED' || (to === '+15550000003' && status === 'DELIVERED');
      await waitUntil(async () => {
        const list = await server.call('GET', '/v1/messages?limit=200', { key });
        return list.body.length === 7 && list.body.every((message: any) => settled(message.status, message.to));
      }, 20_000, 'every message settled');

      // What the counters should say, from the messages themselves.
      const messages = (await server.call('GET', '/v1/messages?limit=200', { key })).body;
      const expected: Record<string, number> = { QUEUED: messages.length, CANCELED: 0 };
      for (const [status, field] of [
        ['SENT', 'sentAt'],
        ['DELIVERED', 'deliveredAt'],
        ['READ', 'readAt'],
        ['FAILED', 'failedAt'],
      ] as const) {
        expected[status] = messages.filter((message: any) => message[field] !== null && message[field] !== undefined).length;
      }
      expected.CANCELED = messages.filter((message: any) => message.status === 'CANCELED').length;
      assert.deepEqual(
        [expected.QUEUED, expected.FAILED, expected.CANCELED, expected.READ],
        [7, 2, 1, 3],
        'the run did what the sandbox promises',
      );

      const from = new Date(Date.now() - 2 * HOUR).toISOString();
      const to = new Date(Date.now() + 2 * HOUR).toISOString();
      const byStatus = await server.call('GET', `/v1/analytics/messages?from=${from}&to=${to}&interval=hour&groupBy=status`, {
        key,
      });
      assert.equal(byStatus.status, 200, byStatus.text);
      assert.equal(byStatus.body.interval, 'hour');
      assert.equal(byStatus.body.groupBy, 'status');
      assert.ok(byStatus.body.buckets.length === 4 || byStatus.body.buckets.length === 5);
      for (const bucket of byStatus.body.buckets) {
        assert.deepEqual(Object.keys(bucket.counts), STATUSES, 'every status, zero-filled');
        assert.equal(Date.parse(bucket.start) % HOUR, 0);
      }
      assert.deepEqual(totals(byStatus.body.buckets), expected);

      const byDay = await server.call('GET', `/v1/analytics/messages?from=${from}&to=${to}&interval=day`, { key });
      assert.equal(byDay.status, 200);
      assert.equal(byDay.body.groupBy, 'status');
      assert.deepEqual(totals(byDay.body.buckets), expected, 'days sum their hours');
      for (const bucket of byDay.body.buckets) assert.match(bucket.start, /T00:00:00\.000Z$/);

      const byTemplate = await server.call('GET', `/v1/analytics/messages?from=${from}&to=${to}&groupBy=template`, { key });
      assert.deepEqual(totals(byTemplate.body.buckets), { order_update: 5, receipt: 2 });
      const byLanguage = await server.call('GET', `/v1/analytics/messages?from=${from}&to=${to}&groupBy=language`, { key });
      assert.deepEqual(totals(byLanguage.body.buckets), { en_US: 5, pt_BR: 2 });

      // Another project sees none of it.
      const other = await server.createProject();
      const theirs = await server.call('GET', `/v1/analytics/messages?from=${from}&to=${to}`, { key: other.key });
      assert.deepEqual(totals(theirs.body.buckets), Object.fromEntries(STATUSES.map((status) => [status, 0])));
    });

    it('answers one zero-filled bucket per interval, from rounded down and to up', async () => {
      const { key } = await server.createProject();
      const reply = await server.call(
        'GET',
        '/v1/analytics/messages?from=2026-03-01T10:30:00Z&to=2026-03-01T15:00:00Z&interval=hour&groupBy=template',
        { key },
      );
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.body.from, '2026-03-01T10:00:00.000Z');
      assert.equal(reply.body.to, '2026-03-01T15:00:00.000Z');
      assert.deepEqual(
        reply.body.buckets.map((bucket: any) => bucket.start),
        ['10', '11', '12', '13', '14'].map((hour) => `2026-03-01T${hour}:00:00.000Z`),
      );
      for (const bucket of reply.body.buckets) assert.deepEqual(bucket.counts, {});
      // `to` inside an hour is rounded up: the counters are hourly, so the last bucket is whole.
      const cut = await server.call('GET', '/v1/analytics/messages?from=2026-03-01T10:00:00Z&to=2026-03-01T12:30:00Z&interval=hour', { key });
      assert.equal(cut.status, 200, cut.text);
      assert.equal(cut.body.to, '2026-03-01T13:00:00.000Z');
      assert.equal(cut.body.buckets.length, 3);
      const year = await server.call('GET', '/v1/analytics/messages?from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', { key });
      assert.equal(year.status, 200);
      assert.equal(year.body.buckets.length, 365);
    });

    it('refuses bad ranges (422) and bad parameters (400), and keys it does not know (401)', async () => {
      const { key } = await server.createProject();
      const ask = (query: string, withKey = key) => server.call('GET', `/v1/analytics/messages?${query}`, { key: withKey });
      for (const query of [
        'from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z',
        'from=2026-03-01T00:00:00Z&to=2026-03-01T00:00:00Z',
        'from=2026-01-01T00:00:00Z&to=2026-02-02T00:00:00Z&interval=hour',
        'from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&interval=day',
      ]) {
        const reply = await ask(query);
        assert.equal(reply.status, 422, query);
        assert.equal(reply.body.code, 'invalid_time_range');
      }
      for (const query of [
        'to=2026-03-01T00:00:00Z',
        'from=yesterday&to=2026-03-01T00:00:00Z',
        'from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z&interval=week',
        'from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z&groupBy=recipient',
        "from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z&groupBy=status'--",
      ]) {
        assert.equal((await ask(query)).status, 400, query);
      }
      assert.equal((await ask('from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z', 'svc_live_nope')).status, 401);
    });
  });
}
