import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError, ERROR_CODES, ERROR_SENTENCES, type ErrorCode, errorOf, messageOf, notFound, validationError } from '../src/errors.ts';
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

  it('words each named sentence as the API always has, under a registered code', () => {
    const expected = {
      route_not_found: ['No route GET /v2/nothing.', { method: 'GET', path: '/v2/nothing' }],
      operator_route_not_found: ['No route GET /x on the operator port.', { method: 'GET', path: '/x' }],
      console_file_not_found: ['No console file assets/x.js.', { path: 'assets/x.js' }],
      number_not_suppressed: ['This number is not on the project’s suppression list.', {}],
      message_held_by_provider: ['The provider holds the message for quality assessment and may still send it: it cannot be canceled.', {}],
      message_being_submitted: ['The message is being submitted to the provider right now and cannot be canceled.', {}],
      api_key_revoked: ['The API key was revoked.', {}],
    } as const;
    assert.deepEqual(Object.keys(ERROR_SENTENCES).sort(), Object.keys(expected).sort());
    for (const [name, [sentence, params]] of Object.entries(expected)) {
      const error = errorOf(name as keyof typeof expected, params);
      assert.equal(error.message, sentence, name);
      assert.ok(Object.hasOwn(ERROR_CODES, error.code), name);
      assert.equal(error.status, ERROR_CODES[error.code].status);
    }
    assert.equal(
      messageOf('recipient_suppressed', { to: '+5521998765432' }),
      '+5521998765432 is on this project’s suppression list (opted out); remove it with DELETE /v1/suppressions/{phoneNumber} to send to it.',
    );
    assert.equal(messageOf('api_key_limit_reached', { max: 10 }), 'The project already has 10 active API keys, the most it may hold; revoke one first.');
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
