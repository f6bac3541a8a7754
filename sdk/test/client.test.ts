import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createSvcClient, SvcError, unwrap } from '../src/index.ts';
import { databaseKinds } from '../../test/support/databases.ts';
import { sendBody, senderAt } from '../../test/support/sending.ts';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

// The SDK's hand-written layer against a real svc (both databases), and against a local stub
// server where svc cannot be made to answer 429/503 on demand.

interface Stub {
  url: string;
  requests: { method: string; path: string; headers: IncomingMessage['headers']; body: string; at: number }[];
  close(): Promise<void>;
}

/** A local HTTP server that answers the nth request (from 1) as `answer` says. */
async function startStub(answer: (nth: number, request: IncomingMessage, response: ServerResponse) => void): Promise<Stub> {
  const requests: Stub['requests'] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        method: request.method!,
        path: request.url!,
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
        at: performance.now(),
      });
      answer(requests.length, request, response);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

const problem = (status: number, code: string) => ({
  type: 'about:blank',
  title: 'x',
  status,
  code,
  detail: `${code} detail`,
  requestId: 'req_stub',
});

describe('retries (stub server)', () => {
  test('a 429 is retried after the Retry-After it gives, with the same body and key', async () => {
    const stub = await startStub((nth, _request, response) =>
      nth === 1 ? json(response, 429, problem(429, 'rate_limited'), { 'retry-after': '1' }) : json(response, 200, { id: 'key_1', name: 'ci' }),
    );
    try {
      const svc = createSvcClient({ baseUrl: stub.url, apiKey: 'svc_live_x' });
      const created = await unwrap(svc.POST('/v1/api-keys', { body: { name: 'ci' } }));
      assert.equal(created.name, 'ci');
      assert.equal(stub.requests.length, 2);
      const waited = stub.requests[1]!.at - stub.requests[0]!.at;
      assert.ok(waited >= 950, `waited ${waited} ms, Retry-After said 1 s`);
      assert.equal(stub.requests[1]!.body, JSON.stringify({ name: 'ci' }));
      for (const request of stub.requests) assert.equal(request.headers.authorization, 'Bearer svc_live_x');
    } finally {
      await stub.close();
    }
  });

  test('a 503 to a write without an Idempotency-Key is not retried: the write may have committed', async () => {
    const stub = await startStub((_nth, _request, response) => json(response, 503, problem(503, 'unavailable')));
    try {
      const svc = createSvcClient({ baseUrl: stub.url, apiKey: 'svc_live_x', retry: { maxRetries: 2, baseDelayMs: 10 } });
      const created = await svc.POST('/v1/api-keys', { body: { name: 'ci' } });
      assert.equal(created.response.status, 503);
      assert.equal(stub.requests.length, 1, 'sent once');
      // A send carries a generated Idempotency-Key: repeating it is safe, so it is retried.
      await svc.POST('/v1/messages', { body: { to: '+5511987654321', template: 't', language: 'en_US', variables: { '1': 'x' } } });
      assert.equal(stub.requests.length, 4, 'the send sent three times');
    } finally {
      await stub.close();
    }
  });

  test('a 503 is retried with backoff until the retries run out; the last answer is returned', async () => {
    const stub = await startStub((_nth, _request, response) => json(response, 503, problem(503, 'unavailable')));
    try {
      const svc = createSvcClient({ baseUrl: stub.url, apiKey: 'svc_live_x', retry: { maxRetries: 2, baseDelayMs: 10 } });
      const error = await unwrap(svc.GET('/v1/projects/me')).then(
        () => assert.fail('expected an error'),
        (error: unknown) => error,
      );
      assert.ok(error instanceof SvcError);
      assert.equal(error.status, 503);
      assert.equal(error.code, 'unavailable');
      assert.equal(error.requestId, 'req_stub');
      assert.equal(stub.requests.length, 3);
    } finally {
      await stub.close();
    }
  });

  test('a Retry-After longer than maxDelayMs is not waited out', async () => {
    const stub = await startStub((_nth, _request, response) =>
      json(response, 429, problem(429, 'rate_limited'), { 'retry-after': '3600' }),
    );
    try {
      const svc = createSvcClient({ baseUrl: stub.url, apiKey: 'svc_live_x', retry: { maxDelayMs: 2000 } });
      const started = performance.now();
      const result = await svc.GET('/v1/projects/me');
      assert.equal(result.response.status, 429);
      assert.equal(stub.requests.length, 1);
      assert.ok(performance.now() - started < 1000);
    } finally {
      await stub.close();
    }
  });

  test('other errors are not retried, and retry: false turns retries off', async () => {
    const stub = await startStub((nth, _request, response) =>
      nth === 1 ? json(response, 500, problem(500, 'internal_error')) : json(response, 503, problem(503, 'unavailable')),
    );
    try {
      const svc = createSvcClient({ baseUrl: stub.url, apiKey: 'svc_live_x' });
      assert.equal((await svc.GET('/v1/projects/me')).response.status, 500);
      const noRetry = createSvcClient({ baseUrl: stub.url, apiKey: 'svc_live_x', retry: false });
      assert.equal((await noRetry.GET('/v1/projects/me')).response.status, 503);
      assert.equal(stub.requests.length, 2);
    } finally {
      await stub.close();
    }
  });

  test('an aborted call stops waiting', async () => {
    const stub = await startStub((_nth, _request, response) =>
      json(response, 503, problem(503, 'unavailable'), { 'retry-after': '20' }),
    );
    try {
      const svc = createSvcClient({ baseUrl: stub.url, apiKey: 'svc_live_x' });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const started = performance.now();
      await assert.rejects(svc.GET('/v1/projects/me', { signal: controller.signal }));
      assert.ok(performance.now() - started < 5000);
    } finally {
      await stub.close();
    }
  });
});

for (const kind of databaseKinds()) {
  describe(`against svc (${kind})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind);
    });
    after(async () => {
      await server.close();
    });

    test('a project is created without a key, then used with its key; errors are SvcErrors', async () => {
      const anonymous = createSvcClient({ baseUrl: server.url });
      const created = await unwrap(anonymous.POST('/v1/projects', { body: { name: 'SDK', ownerEmail: 'sdk@example.com' } }));
      assert.match(created.apiKey, /^svc_live_/);
      const svc = createSvcClient({ baseUrl: server.url + '/', apiKey: created.apiKey });
      const me = await unwrap(svc.GET('/v1/projects/me'));
      assert.equal(me.projectId, created.projectId);
      await assert.rejects(unwrap(anonymous.GET('/v1/projects/me')), (error: unknown) => {
        assert.ok(error instanceof SvcError);
        assert.equal(error.status, 401);
        assert.equal(error.code, 'unauthorized');
        return true;
      });
      await assert.rejects(
        unwrap(svc.GET('/v1/templates/{id}', { params: { path: { id: 'tpl_00000000000000000000000000' } } })),
        (error: unknown) => error instanceof SvcError && error.code === 'not_found' && /^req_/.test(error.requestId ?? ''),
      );
    });

    test('paginate() walks every page of a real list, newest first, following Link', async () => {
      const created = await unwrap(
        createSvcClient({ baseUrl: server.url }).POST('/v1/projects', { body: { name: 'Pages', ownerEmail: 'p@example.com' } }),
      );
      const svc = createSvcClient({ baseUrl: server.url, apiKey: created.apiKey });
      for (let i = 1; i <= 6; i++) await unwrap(svc.POST('/v1/api-keys', { body: { name: `key-${i}` } }));
      const pages: number[] = [];
      svc.use({
        onResponse({ response }) {
          if (response.ok) pages.push(Number(response.headers.get('link') !== null));
        },
      });
      const names: string[] = [];
      for await (const key of svc.paginate('/v1/api-keys', { query: { limit: 3 } })) names.push(key.name);
      assert.deepEqual(names, ['key-6', 'key-5', 'key-4', 'key-3', 'key-2', 'key-1', 'default']);
      assert.deepEqual(pages, [1, 1, 0], 'three pages, the last without a Link');
      // An invalid query fails the iteration with the API's error.
      const iterator = svc.paginate('/v1/api-keys', { query: { limit: 0 } });
      await assert.rejects(iterator.next(), (error: unknown) => error instanceof SvcError && error.status === 400);
    });

    test('sends carry a generated Idempotency-Key, reused by a retry; a given key is kept and replays', async () => {
      const sender = await senderAt(server.url);
      // A proxy that answers the first send with 503 and forwards everything else to svc.
      const proxy = await startStub((nth, request, response) => {
        if (nth === 1) return json(response, 503, problem(503, 'unavailable'), { 'retry-after': '0' });
        const { body } = stubProxy.requests[nth - 1]!;
        void fetch(server.url + request.url, {
          method: request.method,
          headers: Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'content-length') as [string, string][],
          ...(body && { body }),
        }).then(async (answer) => {
          response.writeHead(answer.status, Object.fromEntries(answer.headers));
          response.end(Buffer.from(await answer.arrayBuffer()));
        });
      });
      const stubProxy = proxy;
      try {
        const svc = createSvcClient({ baseUrl: proxy.url, apiKey: sender.key });
        const sent = await unwrap(svc.POST('/v1/messages', { body: sendBody(sender) }));
        assert.equal(sent.status, 'QUEUED');
        assert.equal(proxy.requests.length, 2);
        const [first, second] = proxy.requests.map((request) => request.headers['idempotency-key']);
        assert.match(String(first), /^[0-9a-f-]{36}$/);
        assert.equal(second, first, 'the retry reuses the key');

        const again = await unwrap(svc.POST('/v1/messages', { body: sendBody(sender) }));
        assert.notEqual(again.id, sent.id, 'each call gets its own key');

        const keyed = { body: sendBody(sender), params: { header: { 'idempotency-key': 'order-1001' } } };
        const original = await svc.POST('/v1/messages', keyed);
        const replay = await svc.POST('/v1/messages', keyed);
        assert.equal(proxy.requests.at(-1)!.headers['idempotency-key'], 'order-1001');
        assert.equal(replay.data!.id, original.data!.id);
        assert.equal(replay.response.headers.get('idempotent-replayed'), 'true');
        // Other POSTs get no key.
        await unwrap(svc.POST('/v1/api-keys', { body: { name: 'other' } }));
        assert.equal(proxy.requests.at(-1)!.headers['idempotency-key'], undefined);
      } finally {
        await proxy.close();
      }
    });
  });
}
