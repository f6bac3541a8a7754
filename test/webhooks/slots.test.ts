import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { perProjectLimit, type SlotRequest, WebhookSlots } from '../../src/workers/webhookSlots.ts';

// How free webhook slots are dealt: round-robin across projects, bounded overall, per origin and
// per project, with a reserve that lets a project with nothing in flight always start.

const request = (projectId: string, origin = `https://${projectId}.example`, allowance = Infinity): SlotRequest => ({
  projectId,
  origin,
  allowance,
});

describe('webhook slots', () => {
  it('gives one project at most its share of its origin, never the whole origin', () => {
    const slots = new WebhookSlots({ maxInFlight: 256, maxPerOrigin: 16 });
    const quotas = slots.share([request('a')]);
    assert.equal(quotas.get('a'), perProjectLimit({ maxInFlight: 256, maxPerOrigin: 16 }));
    assert.equal(quotas.get('a'), 12);
  });

  it('deals round-robin: projects sharing an origin get equal turns', () => {
    const slots = new WebhookSlots({ maxInFlight: 256, maxPerOrigin: 16 });
    const origin = 'https://hooks.example';
    const quotas = slots.share([request('a', origin), request('b', origin)]);
    assert.deepEqual([quotas.get('a'), quotas.get('b')], [6, 6]);
  });

  it('keeps a reserve: a project with nothing in flight starts even when the others have filled theirs', () => {
    const slots = new WebhookSlots({ maxInFlight: 8, maxPerOrigin: 8 });
    const first = slots.share([request('a'), request('b'), request('c')]);
    assert.deepEqual([first.get('a'), first.get('b'), first.get('c')], [2, 2, 2], 'a quarter stays free');
    for (const projectId of ['a', 'b', 'c']) {
      for (let i = 0; i < 2; i++) slots.take(projectId, `https://${projectId}.example`);
    }
    const next = slots.share([request('a'), request('b'), request('c'), request('d'), request('e'), request('f')]);
    assert.deepEqual(Object.fromEntries(next), { d: 1, e: 1 }, 'newcomers only, until the pool is full');
    for (const projectId of ['d', 'e']) slots.take(projectId, `https://${projectId}.example`);
    assert.equal(slots.full, true);
    assert.equal(slots.share([request('f')]).size, 0);
    slots.give('a', 'https://a.example');
    assert.deepEqual(Object.fromEntries(slots.share([request('a'), request('f')])), { f: 1 });
  });

  it('never deals an origin more than its circuit allows', () => {
    const slots = new WebhookSlots({ maxInFlight: 256, maxPerOrigin: 16 });
    const origin = 'https://probed.example';
    const quotas = slots.share([request('a', origin, 1), request('b', origin, 1), request('c', 'https://held.example', 0)]);
    assert.deepEqual(Object.fromEntries(quotas), { a: 1 });
  });
});
