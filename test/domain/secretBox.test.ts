import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { openSecret, sealSecret } from '../../src/domain/secretBox.ts';

// Secrets at rest (AES-256-GCM): each key is imported once and reused, which must never let one
// key open what another sealed, nor a tampered value open.
describe('secretBox', () => {
  it('opens what it sealed, with a fresh IV each time', () => {
    const key = randomBytes(32);
    const a = sealSecret(key, 'token-1');
    const b = sealSecret(key, 'token-1');
    assert.notEqual(a, b);
    assert.equal(openSecret(key, a), 'token-1');
    assert.equal(openSecret(key, b), 'token-1');
    assert.equal(openSecret(Buffer.from(key), a), 'token-1', 'an equal key in another buffer');
  });

  it('refuses another key, a tampered value and an unknown format', () => {
    const key = randomBytes(32);
    const other = randomBytes(32);
    const sealed = sealSecret(key, 'whsec_abc');
    assert.equal(openSecret(key, sealed), 'whsec_abc');
    assert.throws(() => openSecret(other, sealed));
    assert.equal(openSecret(key, sealed), 'whsec_abc', 'the first key still opens it after the other was used');
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[raw.length - 1]! ^= 1;
    assert.throws(() => openSecret(key, `v1.${raw.toString('base64')}`));
    assert.throws(() => openSecret(key, `v2.${sealed.slice(3)}`), /unknown secret format/);
  });
});
