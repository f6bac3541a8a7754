import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  orderedValues,
  parameterProblems,
  parseIdempotencyKey,
  recipientProblem,
  requestFingerprint,
  variablesMatch,
} from '../../src/domain/messageRequest.ts';
import { whatsappParameterRule } from '../../src/providers/whatsapp/parameterRule.ts';

describe('send request rules', () => {
  it('accepts possible E.164 numbers only', () => {
    for (const ok of ['+5511987654321', '+14155552671', '+15550000001', '+447911123456']) {
      assert.equal(recipientProblem(ok), undefined, ok);
    }
    for (const bad of ['5511987654321', '+0511987654321', '+1', '+12345', '+1234567890123456', '+55 11 98765', '+4411']) {
      assert.ok(recipientProblem(bad), bad);
    }
  });

  it('applies the provider’s parameter rules', () => {
    assert.deepEqual(parameterProblems('/variables', { '1': 'Ana', '2': 'a    b' }, whatsappParameterRule), []);
    const problems = parameterProblems('/variables', { '1': ' ', '2': 'a\nb', '3': 'tab\there', '4': 'a     b' }, whatsappParameterRule);
    assert.deepEqual(
      problems.map((problem) => problem.field),
      ['/variables/1', '/variables/2', '/variables/3', '/variables/4'],
    );
  });

  it('matches variables to placeholders exactly', () => {
    assert.ok(variablesMatch(2, { '1': 'a', '2': 'b' }));
    assert.ok(variablesMatch(0, undefined));
    assert.ok(!variablesMatch(2, { '1': 'a' }));
    assert.ok(!variablesMatch(1, { '1': 'a', '2': 'b' }));
    assert.ok(!variablesMatch(2, { '1': 'a', '3': 'b' }));
    assert.deepEqual(orderedValues({ '10': 'j', '2': 'b', '1': 'a' }), ['a', 'b', 'j']);
  });

  it('parses Idempotency-Key, including the structured-field string form', () => {
    assert.equal(parseIdempotencyKey(undefined), undefined);
    assert.equal(parseIdempotencyKey('abc-123'), 'abc-123');
    assert.equal(parseIdempotencyKey('"abc-123"'), 'abc-123');
    assert.equal(parseIdempotencyKey('"a\\"b"'), 'a"b');
    assert.throws(() => parseIdempotencyKey(''));
    assert.throws(() => parseIdempotencyKey('x'.repeat(256)));
    assert.throws(() => parseIdempotencyKey('caf\u00e9'));
  });

  it('fingerprints bodies regardless of key order', () => {
    assert.equal(requestFingerprint({ a: 1, b: { c: 2, d: 3 } }), requestFingerprint({ b: { d: 3, c: 2 }, a: 1 }));
    assert.notEqual(requestFingerprint({ a: 1 }), requestFingerprint({ a: 2 }));
  });
});
