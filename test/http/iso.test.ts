import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { iso } from '../../src/http/schemas.ts';

// iso() formats timestamps on every answer (issue #11 made it cheaper): it must be Date#toISOString.

describe('iso', () => {
  it('is exactly Date#toISOString', () => {
    let seed = 11;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const samples = [0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000, 951_782_400_000, 1_795_000_000_123, 253_402_300_799_999];
    for (let i = 0; i < 20_000; i++) samples.push(Math.floor(random() * 4_102_444_800_000));
    // Back and forth across days, as a page of messages does.
    for (let i = 0; i < 1000; i++) samples.push(1_795_000_000_000 + (i % 2) * 86_400_000 + i);
    for (const ms of samples) assert.equal(iso(ms), new Date(ms).toISOString(), String(ms));
    for (const ms of [-1, -86_400_001, 253_402_300_800_000, 8.64e15, 1.5]) assert.equal(iso(ms), new Date(ms).toISOString());
  });
});
