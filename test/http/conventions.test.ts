import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

function assertProblem(reply: { status: number; headers: Headers; body: any }, status: number, code: string) {
  assert.equal(reply.status, status);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  assert.equal(reply.body.status, status);
  assert.equal(reply.body.code, code);
  assert.equal(reply.body.type, 'about:blank');
  assert.equal(typeof reply.body.title, 'string');
  assert.equal(typeof reply.body.detail, 'string');
  assert.equal(reply.body.requestId, reply.headers.get('x-request-id'));
}

for (const kind of databaseKinds()) {
  describe(`HTTP conventions (${kind})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind);
    });
    after(() => server.close());

    it('gives every response an X-Request-Id, honouring a sane incoming one', async () => {
      const generated = await server.call('GET', '/healthz');
      assert.match(generated.headers.get('x-request-id') ?? '', /^req_[A-Za-z0-9_-]+$/);
      const honoured = await server.call('GET', '/healthz', { headers: { 'x-request-id': 'trace-123.abc' } });
      assert.equal(honoured.headers.get('x-request-id'), 'trace-123.abc');
      const hostile = await server.call('GET', '/healthz', { headers: { 'x-request-id': 'a b<script>' } });
      assert.notEqual(hostile.headers.get('x-request-id'), 'a b<script>');
      assert.match(hostile.headers.get('x-request-id') ?? '', /^req_/);
    });

    it('answers an unknown route with 404 not_found', async () => {
      assertProblem(await server.call('GET', '/v1/nothing-here'), 404, 'not_found');
    });

    it('answers a wrong method with 405 and Allow', async () => {
      const reply = await server.call('PATCH', '/v1/projects');
      assertProblem(reply, 405, 'method_not_allowed');
      assert.equal(reply.headers.get('allow'), 'POST');
      const keys = await server.call('PUT', '/v1/api-keys/key_123');
      assert.equal(keys.headers.get('www-authenticate'), null);
      assertProblem(keys, 405, 'method_not_allowed');
      assert.equal(keys.headers.get('allow'), 'DELETE');
    });

    it('refuses malformed JSON with 400 invalid_json', async () => {
      const reply = await server.call('POST', '/v1/projects', {
        raw: '{"name": "x",',
        headers: { 'content-type': 'application/json' },
      });
      assertProblem(reply, 400, 'invalid_json');
      assert.doesNotMatch(reply.text, /at .*\.js|SyntaxError|stack/);
    });

    it('refuses a body that is not JSON with 415', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const reply = await server.call('POST', '/v1/projects', {
          raw: 'name=x',
          headers: { 'content-type': type },
        });
        assertProblem(reply, 415, 'unsupported_media_type');
      }
    });

    it('refuses a body over 64 KiB with 413', async () => {
      const reply = await server.call('POST', '/v1/projects', {
        body: { name: 'x'.repeat(70 * 1024), ownerEmail: 'a@example.com' },
      });
      assertProblem(reply, 413, 'payload_too_large');
    });

    it('lists every invalid field in errors[] with JSON pointers', async () => {
      const reply = await server.call('POST', '/v1/projects', { body: { name: 42, extra: true } });
      assertProblem(reply, 400, 'validation_failed');
      const fields = reply.body.errors.map((error: any) => error.field).sort();
      assert.deepEqual(fields, ['/extra', '/name', '/ownerEmail']);
      for (const error of reply.body.errors) {
        assert.equal(typeof error.code, 'string');
        assert.equal(typeof error.message, 'string');
      }
    });

    it('ignores prototype-poisoning payloads', async () => {
      const reply = await server.call('POST', '/v1/projects', {
        raw: '{"name":"x","ownerEmail":"a@example.com","__proto__":{"admin":true}}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(reply.status, 400);
    });

    it('reports liveness and readiness', async () => {
      const health = await server.call('GET', '/healthz');
      assert.equal(health.status, 200);
      assert.deepEqual(health.body, { status: 'ok' });
      const ready = await server.call('GET', '/readyz');
      assert.equal(ready.status, 200);
      assert.deepEqual(ready.body, { status: 'ready' });
    });

    it('exposes Prometheus metrics by route and status', async () => {
      await server.call('GET', '/healthz');
      const reply = await server.call('GET', '/metrics');
      assert.equal(reply.status, 200);
      assert.match(reply.text, /svc_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
      assert.match(reply.text, /svc_http_request_duration_seconds_bucket\{/);
    });

    it('publishes an OpenAPI 3.1 document and an API reference page', async () => {
      const doc = await server.call('GET', '/openapi.json');
      assert.equal(doc.status, 200);
      assert.equal(doc.body.openapi, '3.1.0');
      assert.ok(doc.body.paths['/v1/projects'].post);
      assert.ok(doc.body.paths['/v1/api-keys/{id}'].delete.responses['409']);
      const page = await server.call('GET', '/docs/');
      assert.equal(page.status, 200);
      assert.match(page.text, /<html/i);
    });
  });
}
