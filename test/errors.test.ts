import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError, ERROR_CODES, type ErrorCode, messageOf, notFound, validationError } from '../src/errors.ts';
import { batchAnswerJson } from '../src/http/batchAnswer.ts';
import { ApiError, problemOf } from '../src/http/errors.ts';

// The one error registry (src/errors.ts) and its HTTP rendering (src/http/errors.ts).

const codes = Object.keys(ERROR_CODES) as ErrorCode[];

describe('the error registry', () => {
  it('gives every code a status, a title and a message template', () => {
    assert.ok(codes.length > 30);
    for (const code of codes) {
      const { status, title, template } = ERROR_CODES[code];
      assert.match(code, /^[a-z][a-z_]*$/, code);
      assert.ok(Number.isInteger(status) && status >= 400 && status < 600, `${code}: status ${status}`);
      assert.ok(title.length > 0, `${code}: no title`);
      assert.ok(template.length > 0, `${code}: no template`);
    }
  });

  it('titles every status one way', () => {
    const titleOf = new Map<number, string>();
    for (const code of codes) {
      const { status, title } = ERROR_CODES[code];
      assert.equal(titleOf.get(status) ?? title, title, `${code}: status ${status} titled two ways`);
      titleOf.set(status, title);
    }
  });

  it('fills a template with its parameters and leaves a missing one visible', () => {
    assert.equal(messageOf('not_found', { resource: 'batch' }), 'No batch of this project has that id.');
    assert.equal(messageOf('webhook_endpoint_limit_reached', { max: 20 }), 'The project already has 20 webhook endpoints, the most it may hold; delete one first.');
    assert.equal(messageOf('not_found'), 'No {resource} of this project has that id.');
  });

  it('words each not-found as the API always has', () => {
    const expected = {
      message: 'No message of this project has that id.',
      template: 'No template of this project has that id.',
      batch: 'No batch of this project has that id.',
      'webhook endpoint': 'No webhook endpoint of this project has that id.',
      'webhook delivery': 'No webhook delivery of this project has that id.',
      'active API key': 'No active API key of this project has that id.',
    } as const;
    for (const [resource, sentence] of Object.entries(expected)) {
      const error = notFound(resource as keyof typeof expected);
      assert.equal(error.message, sentence);
      assert.equal(error.code, 'not_found');
      assert.equal(error.status, 404);
    }
  });

  it('keeps a sentence of the site’s own, its field errors and transport hints', () => {
    const error = new DomainError('unavailable', 'Retry later.', { headers: { 'retry-after': '1' } });
    assert.equal(error.message, 'Retry later.');
    assert.equal(error.status, 503);
    assert.deepEqual(error.headers, { 'retry-after': '1' });
    assert.equal(new DomainError('provider_not_configured').message, ERROR_CODES.provider_not_configured.template);
    const one = validationError([{ field: '/to', code: 'invalid_phone', message: '/to is not a phone number.' }]);
    assert.equal(one.message, '/to is not a phone number.');
    assert.equal(one.errors!.length, 1);
    const two = validationError([
      { field: '/a', code: 'required', message: '/a is required.' },
      { field: '/b', code: 'required', message: '/b is required.' },
    ]);
    assert.equal(two.message, '2 fields are invalid.');
  });
});

describe('rendering a domain error as problem+json', () => {
  it('is RFC 9457 problem details with the code, the title of its status and the request id', () => {
    const problem = problemOf(notFound('message'), 'req_1');
    assert.equal(
      JSON.stringify(problem),
      '{"type":"about:blank","title":"Not Found","status":404,"code":"not_found","detail":"No message of this project has that id.","requestId":"req_1"}',
    );
    const invalid = problemOf(validationError([{ field: '/to', code: 'required', message: '/to is required.' }]), 'req_2');
    assert.deepEqual(invalid.errors, [{ field: '/to', code: 'required', message: '/to is required.' }]);
  });

  it('takes ApiError as the HTTP name of the same class', () => {
    assert.equal(ApiError, DomainError);
    assert.ok(new ApiError('rate_limited', { seconds: 3 }) instanceof DomainError);
    assert.equal(new ApiError('rate_limited', { seconds: 3 }).message, 'Too many requests with this API key; retry in 3 s.');
  });

  it('writes a batch answer with each refused item’s problem, byte for byte', () => {
    const body = batchAnswerJson(
      { batchId: 'bat_1', acceptedCount: 0, rejectedCount: 1, items: [{ index: 0, error: new DomainError('recipient_suppressed', 'Suppressed.') }] },
      'req_3',
    );
    assert.equal(
      body,
      '{"batchId":"bat_1","acceptedCount":0,"rejectedCount":1,"items":[{"index":0,"status":422,"error":' +
        '{"type":"about:blank","title":"Unprocessable Content","status":422,"code":"recipient_suppressed","detail":"Suppressed.","requestId":"req_3"}}]}',
    );
  });
});
