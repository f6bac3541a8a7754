import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { idLowerBound, idTime, newId } from '../../src/domain/ids.ts';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from '../../src/domain/apiKeys.ts';

describe('ids', () => {
  it('are prefixed, carry their time and sort by creation', () => {
    const now = Date.UTC(2026, 10, 22, 10, 0, 0, 123);
    const ids = Array.from({ length: 1000 }, () => newId('msg', now));
    assert.match(ids[0]!, /^msg_[0-9a-z]{26}$/);
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(idTime(ids[0]!), now);
    const later = newId('msg', now + 1000);
    assert.ok(later > ids.at(-1)!);
    assert.ok(idLowerBound('msg', now) <= ids[0]!);
    assert.ok(idLowerBound('msg', now + 1) > ids.at(-1)!);
  });
});

describe('API keys', () => {
  it('are svc_live_ + 43 base62 characters, unique, and hashed', () => {
    const keys = Array.from({ length: 200 }, generateApiKey);
    assert.equal(new Set(keys).size, keys.length);
    for (const key of keys) {
      assert.match(key, /^svc_live_[0-9A-Za-z]{43}$/);
      assert.ok(isWellFormedApiKey(key));
    }
    assert.equal(hashApiKey(keys[0]!).length, 64);
    assert.notEqual(hashApiKey(keys[0]!), hashApiKey(keys[1]!));
    assert.ok(!isWellFormedApiKey('svc_live_short'));
    assert.ok(!isWellFormedApiKey('svc_test_' + 'a'.repeat(40)));
  });
});
