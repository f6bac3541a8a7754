import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OPERATION_EXAMPLES } from '../../src/http/openapi/examples.ts';
import { servedOpenApiDocument } from '../../src/http/openapi/servedDocument.ts';
import { createValidatorCompiler } from '../../src/http/validation.ts';
import { databaseKinds } from '../support/databases.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// The examples /docs shows (src/http/openapi/examples.ts) are real: each is on its operation
// (webhook payloads included),
// each passes its schema with the validator the server checks requests with, none is a
// placeholder, and the request examples, sent in order to a live svc, are accepted.

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

let document: Json;
const operations: { at: string; operation: Json }[] = [];

before(async () => {
  document = await servedOpenApiDocument();
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const method of METHODS) if (item[method]) operations.push({ at: `${method.toUpperCase()} ${path}`, operation: item[method] });
  }
  // The webhooks section's payloads are request bodies too (svc's, to the receiver).
  for (const [event, item] of Object.entries(document.webhooks as Json)) operations.push({ at: `webhook ${event}`, operation: item.post });
});

const find = (operationId: string): Json => operations.find(({ operation }) => operation.operationId === operationId)!.operation;
const resolve = (node: Json): Json => {
  if (typeof node?.$ref !== 'string') return node;
  const [, , kind, name] = node.$ref.split('/') as string[];
  return resolve(document.components[kind!][name!]);
};

/** The server's body validator (types as sent, no coercion) over a schema of the document. */
function validate(schema: Json, value: unknown): string[] {
  const check = createValidatorCompiler()({ schema: { ...schema, components: document.components }, httpPart: 'body', method: 'POST', url: '/' });
  // useDefaults fills defaults in: validate a copy, never the example itself.
  const valid = check(structuredClone(value)) as boolean;
  return valid ? [] : ((check as unknown as { errors: { instancePath: string; message: string }[] }).errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}

/** Every string of a value that is empty or a generator's placeholder. */
function placeholders(value: unknown, at = ''): string[] {
  if (typeof value === 'string') return value === '' || /^(string|additionalProperty)$/.test(value) ? [at] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => placeholders(item, `${at}/${index}`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => [...(key === 'additionalProperty' ? [`${at}/${key}`] : []), ...placeholders(item, `${at}/${key}`)]);
  }
  return [];
}

describe('the examples of the API reference', () => {
  it('every JSON request body and every JSON success answer has one', () => {
    const missing: string[] = [];
    for (const { at, operation } of operations) {
      const body = operation.requestBody?.content?.['application/json'];
      if (body && body.example === undefined) missing.push(`${at} request`);
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        const media = resolve(response).content?.['application/json'];
        if (/^2/.test(status) && media && media.example === undefined) missing.push(`${at} ${status}`);
        // Every error answer shows the problem details of each code it can carry.
        const problem = resolve(response).content?.['application/problem+json'];
        if (problem && problem.example === undefined && problem.examples === undefined) missing.push(`${at} ${status} problem`);
      }
    }
    assert.deepEqual(missing, [], 'add them to src/http/openapi/examples.ts');
  });

  it('each passes its schema, with the server’s own validator, and none is a placeholder', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const { at, operation } of operations) {
      const media: [string, Json | undefined][] = [
        ['request', operation.requestBody?.content?.['application/json']],
        ...Object.entries(operation.responses as Json).flatMap(([status, response]): [string, Json | undefined][] => [
          [status, resolve(response).content?.['application/json']],
          [status, resolve(response).content?.['application/problem+json']],
        ]),
      ];
      for (const [what, content] of media) {
        const examples = [content?.example, ...Object.values((content?.examples ?? {}) as Json).map((named) => named.value)].filter((value) => value !== undefined);
        for (const example of examples) {
          checked++;
          for (const error of validate(content!.schema, example)) problems.push(`${at} ${what}: ${error}`);
          for (const path of placeholders(example)) problems.push(`${at} ${what}: placeholder at ${path || '/'}`);
          if (/^[45]/.test(what) && example.status !== Number(what)) problems.push(`${at} ${what}: the example's status is ${example.status}`);
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(checked >= 400, `only ${checked} examples checked`);
  });

  it('every example belongs to an operation of the document', () => {
    const ids = new Set(operations.map(({ operation }) => operation.operationId));
    assert.deepEqual(Object.keys(OPERATION_EXAMPLES).filter((id) => !ids.has(id)), []);
  });

  it('a schema violation is caught (the check can fail)', () => {
    const send = operations.find(({ at }) => at === 'POST /v1/messages')!.operation.requestBody.content['application/json'];
    assert.notDeepEqual(validate(send.schema, { ...send.example, to: 5511987654321 }), []);
    assert.notDeepEqual(placeholders({ to: '', variables: { additionalProperty: 'x' } }), []);
  });
});

for (const kind of databaseKinds()) {
  describe(`the request examples, sent to a live svc (${kind})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind, { env: { SVC_SANDBOX_REVIEW_DELAY_MS: '3600000' } });
    });
    after(() => server.close());

    it('creates the project, template, messages, batch, suppression and endpoint the examples describe', async () => {
      const examples = (id: string) => OPERATION_EXAMPLES[id]!.request as Json;
      const created = await server.call('POST', '/v1/projects', { body: examples('createProject') });
      assert.equal(created.status, 200, created.text);
      assert.equal(created.body.name, examples('createProject').name);
      const key = created.body.apiKey as string;
      const call = async (method: string, path: string, id: string, status = 200) => {
        const reply = await server.call(method, path, { key, body: examples(id) });
        assert.equal(reply.status, status, `${id}: ${reply.text}`);
        return reply.body;
      };

      await call('PUT', '/v1/projects/me/provider-credentials', 'saveProviderCredentials');
      const template = await call('POST', '/v1/templates', 'createTemplate');
      assert.equal(template.status, 'PENDING');
      await call('POST', `/v1/test-helpers/templates/${template.id}/review`, 'reviewTemplateInSandbox');
      const preview = await call('POST', `/v1/templates/${template.id}/preview`, 'previewTemplate');
      assert.deepEqual(preview, OPERATION_EXAMPLES.previewTemplate!.responses!['200'], 'the preview example is what svc renders');

      const message = await call('POST', '/v1/messages', 'sendMessage', 202);
      const queued = OPERATION_EXAMPLES.sendMessage!.responses!['202'] as Json;
      for (const field of ['status', 'to', 'template', 'language', 'variables', 'headerVariables', 'content']) {
        assert.deepEqual(message[field], queued[field], `sendMessage 202 example: ${field}`);
      }
      await call('POST', `/v1/test-helpers/messages/${message.id}/advance`, 'advanceMessageInSandbox');
      await call('POST', `/v1/test-helpers/messages/${message.id}/reply`, 'replyToMessageInSandbox');

      const batch = await call('POST', '/v1/messages/batch', 'sendMessageBatch', 202);
      const batchExample = OPERATION_EXAMPLES.sendMessageBatch!.responses!['202'] as Json;
      assert.deepEqual([batch.acceptedCount, batch.rejectedCount], [batchExample.acceptedCount, batchExample.rejectedCount]);
      assert.deepEqual({ ...batch.items[2].error, requestId: undefined }, { ...batchExample.items[2].error, requestId: undefined });

      await call('POST', '/v1/suppressions', 'createSuppression', 201);
      await call('PUT', '/v1/projects/me/opt-out', 'updateOptOutSettings');
      await call('PUT', '/v1/projects/me/retention', 'setProjectRetention');
      await call('POST', '/v1/api-keys', 'createApiKey');
      const endpoint = await call('POST', '/v1/webhook-endpoints', 'createWebhookEndpoint', 201);
      const updated = await call('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, 'updateWebhookEndpoint');
      assert.equal(updated.allEvents, true);
      // The example's `since` is a fixed date, and svc refuses one older than 7 days: sent a day
      // back from today, the rest of the example as documented.
      const recoverSince = new Date(Date.now() - 24 * 3_600_000).toISOString();
      const recovered = await server.call('POST', '/v1/webhook-deliveries/recover', { key, body: { ...examples('recoverWebhookDeliveries'), since: recoverSince } });
      assert.equal(recovered.status, 202, `recoverWebhookDeliveries: ${recovered.text}`);

      // Error examples are svc's own answers: a send to the suppressed number, an unknown id, a bad number.
      const problemOf = (id: string, status: string, code: string) => {
        const media = find(id).responses[status].content['application/problem+json'];
        return { ...(media.examples?.[code]?.value ?? media.example), requestId: undefined };
      };
      const suppressed = await server.call('POST', '/v1/messages', { key, body: { ...examples('sendMessage'), to: examples('createSuppression').phoneNumber } });
      assert.deepEqual({ ...suppressed.body, requestId: undefined }, problemOf('sendMessage', '422', 'recipient_suppressed'));
      const unknown = await server.call('GET', '/v1/messages/msg_01jd2k3m4n5p6q7r8s9t0v1w2x', { key });
      assert.deepEqual({ ...unknown.body, requestId: undefined }, problemOf('getMessage', '404', 'not_found'));
      const invalid = await server.call('POST', '/v1/messages', { key, body: { ...examples('sendMessage'), to: '+55 11 1234' } });
      assert.deepEqual({ ...invalid.body, requestId: undefined }, problemOf('sendMessage', '400', 'validation_failed'));
    });
  });
}
