import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { insertWebhookDeliveries, recordWebhookAttempts, type WebhookDeliveryRow } from '../../src/db/webhookDeliveries.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { newId } from '../../src/domain/ids.ts';
import { purgeNow, totalPurged } from '../../src/workers/retention.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { deliveryRows, emitStatus, insertMessage, liveSecrets, setCallbackUrl, waitUntil } from '../support/webhookEvents.ts';
import { ok, startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// The delivery log through real HTTP with hostile ids, cursors and filters, on rows whose ids,
// times and shapes are chosen (ids on both sides of hex boundaries, several in one millisecond, a
// created_at its id does not carry, template and test events without a message, another project's
// rows in between). Every answer is checked against the log's meaning on ids as text (as svc
// answered before migration 0027 stored them as bytes on SQLite), and, when both databases run,
// SQLite's answers must be byte for byte PostgreSQL's.

const HOUR = 60 * 60 * 1000;
// Whether SQLite stores delivery ids as bytes (migration 0027): the storage is checked only then,
// so these tests run as they are on a checkout from before it, to compare its answers.
const BYTES = '0027_delivery_ids_as_bytes' in migrations;
const T = Date.now() - 2 * HOUR; // recent: recover reaches it
const hexTime = (ms: number) => ms.toString(16).padStart(12, '0');
/** A UUIDv7-shaped id at `ms` with the given last 3 groups ('7xxx-yxxx-xxxxxxxxxxxx'). */
const uuidAt = (ms: number, rest: string) => `${hexTime(ms).slice(0, 8)}-${hexTime(ms).slice(8)}-${rest}`;

const MSG_A = newId('msg', T);
const MSG_B = newId('msg', T + 1);
const MSG_OTHER = newId('msg', T + 2);
const URL = 'https://hooks.example.com/svc';

interface Spec {
  id: string;
  other?: boolean;
  event: string;
  eventId: string;
  messageId: string | null;
  status: 'pending' | 'succeeded' | 'failed';
  createdAt: number;
  attempted?: number; // last attempt at
}

// In the order they are listed here: not the ids' order.
const SPECS: Spec[] = [
  { id: uuidAt(T, '7000-8000-000000000000'), event: 'message.sent', eventId: newId('evt', T), messageId: MSG_A, status: 'succeeded', createdAt: T, attempted: T + 10 },
  { id: uuidAt(T, '7000-8000-00000000000f'), event: 'message.sent', eventId: newId('evt', T), messageId: MSG_B, status: 'failed', createdAt: T, attempted: T + 20 },
  { id: uuidAt(T, '7fff-bfff-ffffffffffff'), event: 'message.delivered', eventId: newId('evt', T), messageId: MSG_A, status: 'pending', createdAt: T },
  { id: uuidAt(T, '7000-8000-0000000000f0'), other: true, event: 'message.sent', eventId: newId('evt', T), messageId: MSG_OTHER, status: 'failed', createdAt: T, attempted: T + 30 },
  // A created_at its id does not carry (earlier, and later), as a row may hold.
  { id: uuidAt(T + 1, '7abc-9def-0123456789ab'), event: 'message.read', eventId: newId('evt', T + 1), messageId: MSG_A, status: 'failed', createdAt: T - 5_000, attempted: T + 40 },
  { id: uuidAt(T + 0x10, '7000-8000-000000000001'), event: 'message.failed', eventId: newId('evt', T + 0x10), messageId: MSG_B, status: 'succeeded', createdAt: T + 0x10 + 1, attempted: T + 50 },
  // Template and test events: no message; a tse_ event id (not evt_).
  { id: uuidAt(T + 0x100, '7000-8000-000000000002'), event: 'template.approved', eventId: newId('tse', T + 0x100), messageId: null, status: 'succeeded', createdAt: T + 0x100, attempted: T + 60 },
  { id: uuidAt(T + 0x101, '7000-8000-000000000003'), other: true, event: 'template.approved', eventId: newId('tse', T + 0x101), messageId: null, status: 'succeeded', createdAt: T + 0x101, attempted: T + 61 },
  { id: uuidAt(T + 0x1000, '7000-8000-000000000004'), event: 'webhook.test', eventId: newId('evt', T + 0x1000), messageId: null, status: 'failed', createdAt: T + 0x1000, attempted: T + 70 },
  { id: uuidAt(T + 0x1000, 'f000-c000-000000000005'), event: 'message.replied', eventId: newId('evt', T + 0x1000), messageId: MSG_B, status: 'pending', createdAt: T + 0x1000 },
  { id: uuidAt(T + HOUR, '7000-8000-000000000006'), event: 'message.sent', eventId: newId('evt', T + HOUR), messageId: MSG_A, status: 'succeeded', createdAt: T + HOUR + 7, attempted: T + HOUR + 80 },
];

function rowOf(spec: Spec, projectId: string): WebhookDeliveryRow {
  return {
    id: spec.id,
    project_id: projectId,
    event_id: spec.eventId,
    message_id: spec.messageId,
    template_id: spec.event.startsWith('template.') ? 'tpl_01jdtest0000000000000000a1' : null,
    endpoint_id: spec.messageId === null ? 'we_01jdtest0000000000000000a1' : null,
    event: spec.event,
    url: URL,
    payload: JSON.stringify({ event: spec.event, id: spec.eventId }),
    status: spec.status,
    attempt_count: spec.attempted === undefined ? 0 : 1,
    // Pending ones due far ahead: no worker touches them.
    due_at: spec.status === 'pending' ? T + 48 * HOUR : null,
    lease_expires_at: null,
    created_at: spec.createdAt,
    updated_at: spec.attempted ?? spec.createdAt,
  };
}

const mine = SPECS.filter((spec) => !spec.other);
const byIdDesc = (a: Spec, b: Spec) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');
const iso = (ms: number) => new Date(ms).toISOString();
const uuid7Bound = (ms: number) => `${hexTime(ms).slice(0, 8)}-${hexTime(ms).slice(8)}`;

interface Filter {
  status?: string;
  event?: string;
  messageId?: string;
  since?: number;
  until?: number;
}

/** The log's meaning, on ids as text. */
function expected(filter: Filter, beforeId: string | undefined): Spec[] {
  return mine
    .filter((spec) => beforeId === undefined || spec.id < beforeId)
    .filter((spec) => filter.status === undefined || spec.status === filter.status)
    .filter((spec) => filter.event === undefined || spec.event === filter.event)
    .filter((spec) => filter.messageId === undefined || spec.messageId === filter.messageId)
    .filter((spec) => filter.since === undefined || spec.id >= uuid7Bound(filter.since))
    .filter((spec) => filter.until === undefined || spec.id < uuid7Bound(filter.until))
    .sort(byIdDesc);
}

function queryOf(filter: Filter, cursor: string | undefined, limit: number): string {
  const params = new URLSearchParams();
  params.set('limit', String(limit));
  if (cursor !== undefined) params.set('cursor', cursor);
  if (filter.status !== undefined) params.set('status', filter.status);
  if (filter.event !== undefined) params.set('event', filter.event);
  if (filter.messageId !== undefined) params.set('messageId', filter.messageId);
  if (filter.since !== undefined) params.set('since', iso(filter.since));
  if (filter.until !== undefined) params.set('until', iso(filter.until));
  return `/v1/webhook-deliveries?${params}`;
}

const FILTERS: Filter[] = [
  {},
  { status: 'failed' },
  { status: 'pending' },
  { status: 'succeeded' },
  { event: 'message.sent' },
  { event: 'template.approved' },
  { event: 'message.replied' },
  { messageId: MSG_A },
  { messageId: MSG_B },
  { messageId: MSG_OTHER },
  { messageId: MSG_A.toUpperCase() },
  { messageId: `msg_8${MSG_A.slice(5)}` }, // not canonical: first character above 7
  { messageId: MSG_A.slice(0, -1) + 'u' }, // not Crockford
  { messageId: `${MSG_A}0` },
  { messageId: MSG_A.slice(0, -1) },
  { messageId: SPECS[0]!.id }, // a delivery id where a message id goes
  { messageId: SPECS[0]!.eventId },
  { messageId: '\u{1F600}' },
  { since: -86_400_000 },
  { since: Date.parse('9999-12-31T23:59:59.999Z') },
  { until: -86_400_000 },
  { since: T + HOUR, until: T },
  { since: T },
  { since: T + 1 },
  { since: T + 0x10 },
  { until: T + 1 },
  { until: T + 0x1000 },
  { since: T + 1, until: T + 0x1001 },
  { since: T + HOUR + 1 },
  { since: T + 0x1000, until: T + 0x1000 },
  { status: 'failed', messageId: MSG_B },
  { event: 'message.sent', since: T, until: T + HOUR },
  { status: 'succeeded', event: 'template.approved', since: T },
];

const ids = SPECS.map((spec) => spec.id).sort();
// Cursors of every shape decodeCursor lets through: existing ids (another project's too), ids
// between and beside them, ids past either end, 36 characters of hex and dashes in the wrong
// places, and ids of other kinds.
const CURSORS: string[] = [
  ...ids,
  ...ids.map((id) => id.slice(0, -1) + (id.at(-1) === 'f' ? 'e' : 'f')),
  ...ids.map((id) => id.slice(0, 35) + (id.at(-1) === '0' ? '0' : '1')),
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '-'.repeat(36),
  'f'.repeat(36),
  '0'.repeat(36),
  `${ids[4]!.replaceAll('-', '')}----`,
  `${ids[4]!.slice(0, 8)}${'-'.repeat(28)}`,
  `${ids[4]!.slice(0, 9)}${'-'.repeat(27)}`,
  `${ids[4]!.slice(0, 13)}${'-'.repeat(23)}`,
  `${ids[4]!.slice(0, 35)}-`,
  MSG_A,
  SPECS[0]!.eventId,
  SPECS[6]!.eventId,
  'zzzz_' + '0'.repeat(26),
  'a_' + 'z'.repeat(26),
];
// Cursors that are not one this API gave out: 400 on both.
const BAD_CURSORS: string[] = [
  ids[0]!.toUpperCase(),
  ids[0]!.slice(0, 35),
  `${ids[0]!}0`,
  'é'.repeat(36),
  '',
  ids[0]!.replaceAll('-', ''),
];

/** The deliveries of SPECS, with their attempts recorded as the worker records them. */
async function seed(server: TestServer, projectId: string, otherId: string): Promise<void> {
  const db = server.app.database.db;
  await insertWebhookDeliveries(
    db,
    SPECS.map((spec) => rowOf(spec, spec.other ? otherId : projectId)),
  );
  // Each attempted one: its attempt recorded as the worker records it; the failed ones with an
  // earlier attempt kept apart too.
  for (const spec of SPECS.filter((s) => s.attempted !== undefined)) {
    const attempt = (n: number, at: number, code: number) => ({
      id: newId('att', at),
      delivery_id: spec.id,
      attempt: n,
      at,
      url: URL,
      status_code: code,
      duration_ms: 5,
      error: code >= 300 ? `HTTP ${code}` : null,
      response_body: code >= 300 ? 'no' : '',
    });
    const failed = spec.status === 'failed';
    await recordWebhookAttempts(db, [
      {
        attempt: attempt(failed ? 2 : 1, spec.attempted!, failed ? 500 : 204),
        ...(failed && { previous: attempt(1, spec.attempted! - 5, 503) }),
        update: { projectId: spec.other ? otherId : projectId, status: spec.status, url: URL, dueAt: null, now: spec.attempted! },
      },
    ]);
  }
  if (server.database.kind === 'sqlite' && BYTES) {
    // Stored as 16 bytes where svc stores them so (migration 0027): what these tests are about.
    const kinds = await sql<{ id: string; event_id: string }>`select typeof(id) as id, typeof(event_id) as event_id from webhook_deliveries`.execute(db);
    assert.ok(kinds.rows.length === SPECS.length && kinds.rows.every((row) => row.id === 'blob'));
  }
}

const withoutRequestId = (text: string) => text.replace(/"requestId":"[^"]*"/, '"requestId":"…"');

type Answers = Map<string, { status: number; text: string; link: string | null }>;
const answersByKind = new Map<string, Answers>();

for (const kind of databaseKinds()) {
  describe(`delivery log ids, cursors and filters (${kind})`, () => {
    let server: TestServer;
    let key: string;
    let otherKey: string;
    const answers: Answers = new Map();
    answersByKind.set(kind, answers);

    async function get(path: string, as = key) {
      const reply = await server.call('GET', path, { key: as });
      const link = reply.headers.get('link');
      answers.set(`GET ${path} ${as === key ? '' : 'other'}`, {
        status: reply.status,
        text: withoutRequestId(reply.text),
        link: link === null ? null : link.replace(/^<https?:\/\/[^/]+/, '<'),
      });
      return reply;
    }

    before(async () => {
      server = await startTestServer(kind, { env: { SVC_WEBHOOK_RETRY_SCHEDULE: '50ms' } });
      const project = await server.createProject();
      const other = await server.createProject();
      key = project.key;
      otherKey = other.key;
      await seed(server, project.projectId, other.projectId);
    });
    after(async () => {
      await server.close();
    });

    it('shows each delivery by id as it was written, its created time its own', async () => {
      for (const spec of mine) {
        const reply = await get(`/v1/webhook-deliveries/${spec.id}`);
        assert.equal(reply.status, 200, spec.id);
        assert.equal(reply.body.id, spec.id);
        assert.equal(reply.body.eventId, spec.eventId);
        assert.equal(reply.body.messageId, spec.messageId);
        assert.equal(reply.body.event, spec.event);
        assert.equal(reply.body.createdAt, iso(spec.createdAt), `${spec.id} created at its own time`);
        assert.equal(reply.body.updatedAt, iso(spec.attempted ?? spec.createdAt));
        assert.equal(reply.body.status, spec.status);
        assert.deepEqual(
          reply.body.attempts.map((a: any) => [a.attempt, a.statusCode]),
          spec.attempted === undefined ? [] : spec.status === 'failed' ? [[1, 503], [2, 500]] : [[1, 204]],
        );
        assert.equal(reply.body.payload, JSON.stringify({ event: spec.event, id: spec.eventId }));
        // In capitals: the same delivery (the id is read case-insensitively).
        const upper = await get(`/v1/webhook-deliveries/${spec.id.toUpperCase()}`);
        assert.equal(upper.status, 200);
        assert.equal(upper.text, reply.text);
      }
    });

    it("is 404 for another project's delivery, an id that is not there and an id of any other shape", async () => {
      const theirs = SPECS.filter((spec) => spec.other).map((spec) => spec.id);
      const absent = [
        uuidAt(T, '7000-8000-000000000001'),
        SPECS[0]!.id.slice(0, -1) + '1',
        '00000000-0000-0000-0000-000000000000',
        'ffffffff-ffff-ffff-ffff-ffffffffffff',
      ];
      const malformed = [
        `${SPECS[0]!.id}x`,
        `${SPECS[0]!.id}%20`,
        `${SPECS[0]!.id}0`,
        `%20${SPECS[0]!.id}`,
        SPECS[0]!.id.replaceAll('-', ''),
        SPECS[0]!.id.slice(0, 35),
        'g'.repeat(8) + '-' + 'g'.repeat(4) + '-' + 'g'.repeat(4) + '-' + 'g'.repeat(4) + '-' + 'g'.repeat(12),
        '-'.repeat(36),
        '%C3%A9'.repeat(36),
        '%F0%9F%98%80',
        MSG_A,
        SPECS[0]!.eventId,
        'a'.repeat(199),
      ];
      for (const id of [...theirs, ...absent, ...malformed]) {
        for (const method of ['GET', 'POST'] as const) {
          const path = method === 'GET' ? `/v1/webhook-deliveries/${id}` : `/v1/webhook-deliveries/${id}/retry`;
          const reply = await server.call(method, path, { key });
          assert.equal(reply.status, 404, `${method} ${path}`);
          assert.equal(reply.body.code, 'not_found', `${method} ${path}`);
          answers.set(`${method} ${path}`, { status: reply.status, text: withoutRequestId(reply.text), link: null });
        }
      }
      // An empty id: not found either way.
      const emptyGet = await get('/v1/webhook-deliveries/');
      assert.equal(emptyGet.status, 404);
      const emptyRetry = await server.call('POST', '/v1/webhook-deliveries//retry', { key });
      answers.set('POST empty', { status: emptyRetry.status, text: withoutRequestId(emptyRetry.text), link: null });
      assert.equal(emptyRetry.status, 404);
      // A NUL in the path: Fastify's 400, before any route.
      for (const id of ['%00', SPECS[0]!.id.slice(0, 35) + '%00']) {
        const reply = await server.call('GET', `/v1/webhook-deliveries/${id}`, { key });
        assert.equal(reply.status, 400, id);
      }
      // Too long for the route: 400, as before; another project's delivery, by its id in capitals, is not found.
      for (const method of ['GET', 'POST'] as const) {
        const long = 'a'.repeat(201);
        const path = method === 'GET' ? `/v1/webhook-deliveries/${long}` : `/v1/webhook-deliveries/${long}/retry`;
        const reply = await server.call(method, path, { key });
        answers.set(`${method} long`, { status: reply.status, text: withoutRequestId(reply.text), link: null });
        assert.equal(reply.status, 400, `${method} long`);
      }
      const upperRetry = await server.call('POST', `/v1/webhook-deliveries/${SPECS[3]!.id.toUpperCase()}/retry`, { key });
      answers.set('POST upper', { status: upperRetry.status, text: withoutRequestId(upperRetry.text), link: null });
      assert.equal(upperRetry.status, 404);
      // Nothing of theirs moved: their failed delivery is still failed.
      const theirFailed = await server.call('GET', `/v1/webhook-deliveries/${SPECS[3]!.id}`, { key: otherKey });
      assert.equal(theirFailed.status, 200);
      assert.equal(theirFailed.body.status, 'failed');
    });

    it('answers every filter, with every cursor, as on ids as text', async () => {
      for (const filter of FILTERS) {
        for (const cursorId of [undefined, ...CURSORS]) {
          const want = expected(filter, cursorId);
          const reply = await get(queryOf(filter, cursorId === undefined ? undefined : cursorOf(cursorId), 3));
          assert.equal(reply.status, 200, `${JSON.stringify(filter)} before ${cursorId}`);
          assert.deepEqual(
            reply.body.map((d: any) => d.id),
            want.slice(0, 3).map((spec) => spec.id),
            `${JSON.stringify(filter)} before ${cursorId}`,
          );
          for (const [i, d] of reply.body.entries()) assert.equal(d.createdAt, iso(want[i]!.createdAt));
          const link = reply.headers.get('link');
          if (want.length > 3) assert.match(link ?? '', new RegExp(`cursor=${cursorOf(want[2]!.id)}`));
          else assert.equal(link, null, `${JSON.stringify(filter)} before ${cursorId}`);
        }
      }
    });

    it('pages through every filter to its end, page by page', async () => {
      for (const filter of FILTERS) {
        for (const limit of [1, 2, 5]) {
          const seen: string[] = [];
          let path: string | undefined = queryOf(filter, undefined, limit);
          for (let pages = 0; path !== undefined; pages++) {
            assert.ok(pages < 20);
            const reply = await get(path);
            assert.equal(reply.status, 200);
            seen.push(...reply.body.map((d: any) => d.id));
            const link = reply.headers.get('link');
            path = link === null ? undefined : new globalThis.URL(link.slice(1, link.indexOf('>'))).pathname + new globalThis.URL(link.slice(1, link.indexOf('>'))).search;
          }
          assert.deepEqual(seen, expected(filter, undefined).map((spec) => spec.id), `${JSON.stringify(filter)} by ${limit}`);
        }
      }
    });

    it('refuses a cursor it never gave out', async () => {
      for (const cursorId of BAD_CURSORS) {
        const reply = await get(`/v1/webhook-deliveries?cursor=${cursorOf(cursorId)}`);
        assert.equal(reply.status, 400, cursorId);
        assert.equal(reply.body.code, 'validation_failed');
      }
    });

    it('lists a message’s deliveries under its events', async () => {
      // GET /v1/messages/{id}/events needs the message: not made here. The list by messageId above
      // and the retry/recover below cover the message's deliveries by their stored message id.
      const reply = await get(`/v1/webhook-deliveries?messageId=${MSG_B}&limit=200`);
      assert.deepEqual(
        reply.body.map((d: any) => d.eventId),
        mine.filter((spec) => spec.messageId === MSG_B).sort(byIdDesc).map((spec) => spec.eventId),
      );
    });

    it('retries one delivery and recovers the failed ones, of this project only', async () => {
      const failed = mine.filter((spec) => spec.status === 'failed');
      // Recover those attempted since the newest failed one's attempt: that one only.
      const newest = failed.reduce((a, b) => (a.attempted! > b.attempted! ? a : b));
      const some = await server.call('POST', '/v1/webhook-deliveries/recover', { key, body: { since: iso(newest.attempted!) } });
      assert.equal(some.status, 202);
      assert.deepEqual(some.body, { requeued: 1 });
      const all = await server.call('POST', '/v1/webhook-deliveries/recover', { key, body: { since: iso(T - 10_000) } });
      assert.equal(all.status, 202);
      assert.deepEqual(all.body, { requeued: failed.length - 1 });
      const theirs = await server.call('GET', `/v1/webhook-deliveries/${SPECS[3]!.id}`, { key: otherKey });
      assert.equal(theirs.body.status, 'failed', 'another project’s failed delivery stays');
      const retried = await server.call('POST', `/v1/webhook-deliveries/${SPECS[0]!.id}/retry`, { key });
      assert.equal(retried.status, 202);
      assert.equal(retried.body.id, SPECS[0]!.id);
      assert.equal(retried.body.status, 'pending');
      assert.equal(retried.body.createdAt, iso(SPECS[0]!.createdAt));
      assert.equal(retried.body.messageId, SPECS[0]!.messageId);
      assert.equal(retried.body.eventId, SPECS[0]!.eventId);
      const read = await server.call('GET', `/v1/webhook-deliveries/${SPECS[4]!.id}`, { key });
      assert.equal(read.body.createdAt, iso(SPECS[4]!.createdAt), 'recovered: its created time unchanged');
    });
  });

  describe(`delivery log ids: retention (${kind})`, () => {
    let server: TestServer;
    let key: string;
    let otherKey: string;
    before(async () => {
      server = await startTestServer(kind);
      const project = await server.createProject();
      const other = await server.createProject();
      key = project.key;
      otherKey = other.key;
      await seed(server, project.projectId, other.projectId);
    });
    after(async () => {
      await server.close();
    });

    it('purges the finished deliveries made before the cutoff, with their attempts, of every project', async () => {
      const cutoff = T + 0x1000 + 1;
      const { steps } = await purgeNow(server.app.database, { ...server.app.config.retention, webhookDeliveriesMs: HOUR }, cutoff + HOUR);
      const gone = SPECS.filter((spec) => spec.id < uuid7Bound(cutoff) && spec.status !== 'pending' && (spec.attempted ?? spec.createdAt) < cutoff);
      assert.ok(gone.length >= 5 && gone.length < SPECS.length);
      const purged = totalPurged(steps);
      assert.equal(purged.webhook_deliveries, gone.length);
      assert.equal(purged.webhook_attempts, gone.reduce((n, spec) => n + (spec.attempted === undefined ? 0 : spec.status === 'failed' ? 2 : 1), 0));
      for (const spec of SPECS) {
        const reply = await server.call('GET', `/v1/webhook-deliveries/${spec.id}`, { key: spec.other ? otherKey : key });
        assert.equal(reply.status, gone.includes(spec) ? 404 : 200, spec.id);
      }
      const log = await server.call('GET', '/v1/webhook-deliveries?limit=200', { key });
      assert.deepEqual(
        log.body.map((d: any) => d.id),
        mine.filter((spec) => !gone.includes(spec)).sort(byIdDesc).map((spec) => spec.id),
      );
      if (kind === 'sqlite') {
        const attempts = await server.app.database.db.selectFrom('webhook_attempts').select('id').execute();
        assert.equal(attempts.length, SPECS.filter((spec) => !gone.includes(spec) && spec.status === 'failed').length, 'only the kept deliveries’ earlier attempts');
      }
    });
  });

  describe(`delivery log ids: project erasure (${kind})`, () => {
    let server: TestServer;
    let key: string;
    let otherKey: string;
    before(async () => {
      server = await startTestServer(kind);
      const project = await server.createProject();
      const other = await server.createProject();
      key = project.key;
      otherKey = other.key;
      await seed(server, project.projectId, other.projectId);
    });
    after(async () => {
      await server.close();
    });

    it('erases the project’s deliveries and attempts, counted, pending ones too; the other project’s stay whole', async () => {
      const erased = await server.call('DELETE', '/v1/projects/me', { key });
      assert.equal(erased.status, 200, erased.text);
      assert.equal(erased.body.erased.webhookDeliveries, mine.length);
      assert.equal(
        erased.body.erased.webhookAttempts,
        mine.reduce((n, spec) => n + (spec.attempted === undefined ? 0 : spec.status === 'failed' ? 2 : 1), 0),
      );
      for (const spec of SPECS.filter((s) => s.other)) {
        const reply = await server.call('GET', `/v1/webhook-deliveries/${spec.id}`, { key: otherKey });
        assert.equal(reply.status, 200);
        assert.equal(reply.body.attempts.length, spec.status === 'failed' ? 2 : 1);
        assert.equal(reply.body.createdAt, iso(spec.createdAt));
      }
      const left = await server.app.database.db.selectFrom('webhook_attempts').select('id').execute();
      assert.equal(left.length, SPECS.filter((spec) => spec.other && spec.status === 'failed').length);
    });
  });

  describe(`delivery log ids: made by svc (${kind})`, () => {
    let server: TestServer;
    let receiver: WebhookReceiver;
    before(async () => {
      server = await startTestServer(kind, { env: { SVC_WEBHOOK_RETRY_SCHEDULE: '50ms' } });
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    it('shows the deliveries of a message under its events, of an endpoint test and in the log, each with its created time', async () => {
      receiver.respond = ok;
      const { projectId, key } = await server.createProject();
      await setCallbackUrl(server.app, projectId, `${receiver.url}/callback`);
      receiver.secrets = await liveSecrets(server.app, projectId);
      const endpoint = await server.call('POST', '/v1/webhook-endpoints', { key, body: { url: `${receiver.url}/endpoint` } });
      assert.equal(endpoint.status, 201, endpoint.text);
      const started = Date.now();
      const message = await insertMessage(server.app, projectId);
      const emitted = [];
      for (const status of ['SENT', 'DELIVERED', 'READ'] as const) emitted.push(await emitStatus(server.app, message, status));
      const test = await server.call('POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`, { key });
      assert.equal(test.status, 202, test.text);
      await waitUntil(async () => {
        const rows = await deliveryRows(server.app, projectId);
        return rows.length === 7 && rows.every((row) => row.status === 'succeeded');
      });
      const ended = Date.now();

      const log = await server.call('GET', '/v1/webhook-deliveries?limit=200', { key });
      assert.equal(log.body.length, 7);
      for (const delivery of log.body) {
        // Made by svc: its created time is its id's (a UUIDv7 made then).
        const created = Date.parse(delivery.createdAt);
        assert.ok(created >= started && created <= ended);
        assert.equal(delivery.id.slice(0, 8) + delivery.id.slice(9, 13), created.toString(16).padStart(12, '0'));
        const one = await server.call('GET', `/v1/webhook-deliveries/${delivery.id}`, { key });
        assert.equal(one.status, 200);
        const { payload, ...rest } = one.body;
        assert.deepEqual({ ...rest, attempts: rest.attempts.map(({ responseBody: _, ...a }: any) => a) }, delivery);
        const arrival = receiver.arrivalsFor(delivery.id)[0]!;
        assert.equal(arrival.body, payload);
        assert.equal(arrival.headers['x-service-delivery'], delivery.id);
      }
      const tested = log.body.find((d: any) => d.id === test.body.deliveryId);
      assert.equal(tested.event, 'webhook.test');
      assert.equal(tested.messageId, null);
      assert.equal(JSON.parse(receiver.arrivalsFor(tested.id)[0]!.body).event_id, tested.eventId);

      const events = await server.call('GET', `/v1/messages/${message.id}/events`, { key });
      assert.equal(events.status, 200);
      const shown = events.body.flatMap((event: any) => event.deliveries.map((d: any) => [event.id, d.id, d.eventId, d.createdAt]));
      assert.equal(shown.length, 6);
      for (const [eventId, id, deliveryEventId, createdAt] of shown) {
        assert.equal(deliveryEventId, eventId);
        assert.ok(emitted.some((e) => e.eventId === eventId));
        assert.equal(createdAt, log.body.find((d: any) => d.id === id).createdAt);
      }
      const byMessage = await server.call('GET', `/v1/webhook-deliveries?messageId=${message.id}&limit=200`, { key });
      assert.deepEqual(byMessage.body.map((d: any) => d.id).sort(), shown.map((row: string[]) => row[1]).sort());
      if (kind === 'sqlite' && BYTES) {
        const stored = await sql<{ c: string }>`select typeof(created_at) as c from webhook_deliveries`.execute(server.app.database.db);
        assert.ok(stored.rows.every((row) => row.c === 'null'), 'created_at left to the id');
      }
    });
  });
}

describe('delivery log: SQLite answers as PostgreSQL does', () => {
  it('gives the same bytes for every request', { skip: databaseKinds().length < 2 }, () => {
    const sqlite = answersByKind.get('sqlite')!;
    const postgres = answersByKind.get('postgres')!;
    assert.ok(sqlite.size > 0);
    assert.deepEqual([...sqlite.keys()].sort(), [...postgres.keys()].sort());
    for (const [request, answer] of sqlite) assert.deepEqual(answer, postgres.get(request), request);
  });
});
