import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { servedOpenApiDocument } from '../../src/http/openapi/servedDocument.ts';

// What every operation of the served document must have, so that a route added without it fails
// here, and what the document promises generators (named schemas, enums, headers, webhooks).

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

let document: Json;
const operations: { method: string; path: string; operation: Json }[] = [];

before(async () => {
  document = await servedOpenApiDocument();
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const method of METHODS) if (item[method]) operations.push({ method, path, operation: item[method] });
  }
});

const where = (method: string, path: string) => `${method.toUpperCase()} ${path}`;
const find = (method: string, path: string) => operations.find((entry) => entry.method === method && entry.path === path)!.operation;
const resolve = (node: Json): Json => {
  if (typeof node?.$ref !== 'string') return node;
  const [, , kind, name] = node.$ref.split('/') as string[];
  return resolve(document.components[kind!][name!]);
};

describe('every operation', () => {
  test('has a unique camelCase operationId, a summary and tags with descriptions', () => {
    const ids = new Set<string>();
    const described = new Map((document.tags as Json[]).map((tag) => [tag.name, tag.description]));
    for (const { method, path, operation } of operations) {
      const at = where(method, path);
      assert.match(operation.operationId ?? '', /^[a-z][A-Za-z0-9]+$/, `${at}: set schema.operationId (camelCase verb+noun)`);
      assert.ok(!ids.has(operation.operationId), `${at}: operationId ${operation.operationId} is used twice`);
      ids.add(operation.operationId);
      assert.ok(operation.summary, `${at}: set schema.summary`);
      assert.ok(operation.tags?.length > 0, `${at}: set schema.tags`);
      for (const tag of operation.tags) {
        assert.ok(described.get(tag), `${at}: tag '${tag}' needs a description in src/http/openapi/introduction.ts`);
      }
    }
  });

  test('is named with a verb, as "List messages" or "Send a message" (the title /docs shows)', () => {
    const verbs = 'List|Get|Create|Send|Update|Delete|Remove|Cancel|Retry|Recover|Rotate|Revoke|Save|Erase|Check|Preview|Review|Advance|Reply|Suppress|Shorten';
    const pattern = new RegExp(`^(${verbs}) \\S.*[^.]$`);
    const unnamed = operations.filter(({ operation }) => !pattern.test(operation.summary)).map(({ method, path, operation }) => `${where(method, path)}: ${operation.summary}`);
    assert.deepEqual(unnamed, [], 'a summary starts with a verb (add it above if it is a new one) and has no final full stop');
    const titles = operations.map(({ operation }) => operation.summary);
    assert.deepEqual(titles.filter((title, index) => titles.indexOf(title) !== index), [], 'two operations share a title');
  });

  test('documents its error answers as problem details, with the headers the HTTP layer sends', () => {
    for (const { method, path, operation } of operations) {
      const at = where(method, path);
      const statuses = Object.keys(operation.responses);
      assert.ok(statuses.some((status) => /^2/.test(status)), `${at}: no success response`);
      for (const status of ['400', '500', '503']) assert.ok(statuses.includes(status), `${at}: no ${status}`);
      const authenticated = operation.security.length > 0;
      if (authenticated) for (const status of ['401', '429']) assert.ok(statuses.includes(status), `${at}: no ${status}`);
      if (['post', 'put', 'patch', 'delete'].includes(method)) {
        for (const status of ['413', '415']) assert.ok(statuses.includes(status), `${at}: no ${status}`);
      }
      if (operation.parameters?.some((parameter: Json) => parameter.in === 'path')) {
        assert.ok(statuses.includes('404'), `${at}: has a path parameter, so can answer 404`);
      }
      for (const status of statuses) {
        // Shared answers ($ref) are those the HTTP layer gives before the key is checked (no RateLimit).
        const shared = operation.responses[status].$ref !== undefined;
        const response = resolve(operation.responses[status]);
        assert.ok(response.description, `${at} ${status}: no description`);
        assert.ok(response.headers?.['X-Request-Id'], `${at} ${status}: no X-Request-Id header`);
        if (Number(status) >= 400) {
          assert.deepEqual(response.content?.['application/problem+json']?.schema, { $ref: '#/components/schemas/Problem' }, `${at} ${status}`);
        }
        if (status === '401') assert.ok(response.headers['WWW-Authenticate'], `${at} 401: no WWW-Authenticate`);
        if (status === '429' || status === '503') assert.ok(response.headers['Retry-After'], `${at} ${status}: no Retry-After`);
        if (authenticated && !shared && status !== '401') assert.ok(response.headers.RateLimit && response.headers['RateLimit-Policy'], `${at} ${status}: no RateLimit`);
      }
    }
  });

  test('states its security: the bearer key, or none ([]) on public operations', () => {
    assert.equal(document.components.securitySchemes.bearer.scheme, 'bearer');
    const publicOnes = operations.filter(({ operation }) => operation.security.length === 0).map(({ method, path }) => where(method, path));
    assert.deepEqual(publicOnes.sort(), ['GET /healthz', 'GET /metrics', 'GET /readyz', 'POST /v1/projects']);
    for (const { operation } of operations) {
      for (const requirement of operation.security) assert.deepEqual(requirement, { bearer: [] });
    }
  });

  test('paged lists: limit and cursor optional, Link on the page', () => {
    const paged = operations.filter(({ operation }) => operation.parameters?.some((parameter: Json) => parameter.name === 'cursor'));
    assert.ok(paged.length >= 4);
    for (const { method, path, operation } of paged) {
      for (const parameter of operation.parameters.filter((parameter: Json) => parameter.in === 'query')) {
        assert.notEqual(parameter.required, true, `${where(method, path)}: query ${parameter.name} is required`);
      }
      assert.ok(resolve(operation.responses['200']).headers.Link, `${where(method, path)}: no Link header`);
    }
  });
});

test('named component schemas are used by $ref', () => {
  const schemas = document.components.schemas;
  for (const name of ['Message', 'Template', 'Project', 'ApiKey', 'WebhookDelivery', 'Problem', 'MessageEvent', 'CreatedApiKey']) {
    assert.ok(schemas[name], `components.schemas.${name} is missing`);
  }
  const body = (method: string, path: string, status: string) => resolve(find(method, path).responses[status]).content['application/json'].schema;
  assert.deepEqual(body('get', '/v1/messages/{id}', '200'), { $ref: '#/components/schemas/Message' });
  assert.deepEqual(body('get', '/v1/messages', '200'), { type: 'array', items: { $ref: '#/components/schemas/Message' } });
  assert.deepEqual(body('post', '/v1/messages', '202'), { $ref: '#/components/schemas/Message' });
  assert.deepEqual(body('get', '/v1/templates/{id}', '200'), { $ref: '#/components/schemas/Template' });
  assert.deepEqual(body('get', '/v1/projects/me', '200'), { $ref: '#/components/schemas/Project' });
  assert.deepEqual(body('get', '/v1/api-keys', '200'), { type: 'array', items: { $ref: '#/components/schemas/ApiKey' } });
  assert.deepEqual(body('get', '/v1/webhook-deliveries/{id}', '200'), { $ref: '#/components/schemas/WebhookDelivery' });
});

test('statuses are enums, never anyOf of constants', () => {
  const text = JSON.stringify(document);
  assert.doesNotMatch(text, /"anyOf":\[\{"type":"string","enum":\["[^"]*"\]\}/);
  assert.doesNotMatch(text, /"const":/);
  assert.deepEqual(document.components.schemas.Message.properties.status.enum.slice(0, 5), ['QUEUED', 'SENT', 'DELIVERED', 'READ', 'FAILED']);
  assert.deepEqual(document.components.schemas.Template.properties.status.enum, ['PENDING', 'APPROVED', 'REJECTED']);
});

test('sends document Idempotency-Key and Idempotent-Replayed', () => {
  const send = find('post', '/v1/messages');
  assert.ok(send.parameters.some((parameter: Json) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key'));
  assert.ok(resolve(send.responses['202']).headers['Idempotent-Replayed']);
});

test('an introduction, servers, and a webhooks section with each event, its payload and signature headers', () => {
  assert.equal(document.openapi, '3.1.0');
  assert.ok(document.info.description.length > 500);
  assert.ok(document.servers.length > 0);
  for (const event of ['message.sent', 'message.delivered', 'message.read', 'message.failed']) {
    const post = document.webhooks[event]?.post;
    assert.ok(post, `webhooks.${event} is missing`);
    const headers = post.parameters.map((parameter: Json) => parameter.name);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-Service-Event', 'X-Service-Delivery']) {
      assert.ok(headers.includes(name), `webhooks.${event}: no ${name} header`);
    }
    const payload = resolve(post.requestBody.content['application/json'].schema);
    assert.ok(payload.properties.event.enum.includes(event));
  }
});
