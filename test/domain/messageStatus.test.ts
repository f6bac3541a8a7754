import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventTypeOf, transitionsFor, transitionsForReport } from '../../src/domain/messageStatus.ts';

describe('message state machine', () => {
  it('moves forward one step at a time', () => {
    assert.deepEqual(transitionsFor('QUEUED', 'SENT'), ['SENT']);
    assert.deepEqual(transitionsFor('SENT', 'DELIVERED'), ['DELIVERED']);
    assert.deepEqual(transitionsFor('DELIVERED', 'READ'), ['READ']);
  });

  it('fills in skipped states: READ implies DELIVERED (and SENT)', () => {
    assert.deepEqual(transitionsFor('SENT', 'READ'), ['DELIVERED', 'READ']);
    assert.deepEqual(transitionsFor('QUEUED', 'READ'), ['SENT', 'DELIVERED', 'READ']);
    assert.deepEqual(transitionsFor('QUEUED', 'DELIVERED'), ['SENT', 'DELIVERED']);
  });

  it('never moves backwards, and ignores duplicates', () => {
    assert.deepEqual(transitionsFor('READ', 'DELIVERED'), []);
    assert.deepEqual(transitionsFor('DELIVERED', 'SENT'), []);
    assert.deepEqual(transitionsFor('DELIVERED', 'DELIVERED'), []);
    assert.deepEqual(transitionsFor('SENT', 'SENT'), []);
  });

  it('reaches FAILED from any state before READ, and nothing leaves FAILED or READ', () => {
    for (const from of ['QUEUED', 'SENT', 'DELIVERED'] as const) assert.deepEqual(transitionsFor(from, 'FAILED'), ['FAILED']);
    assert.deepEqual(transitionsFor('READ', 'FAILED'), []);
    for (const to of ['SENT', 'DELIVERED', 'READ', 'FAILED'] as const) assert.deepEqual(transitionsFor('FAILED', to), []);
  });

  it('CANCELED only follows QUEUED, and nothing follows it', () => {
    assert.deepEqual(transitionsFor('QUEUED', 'CANCELED'), ['CANCELED']);
    for (const from of ['SENT', 'DELIVERED', 'READ', 'FAILED'] as const) assert.deepEqual(transitionsFor(from, 'CANCELED'), []);
    for (const to of ['SENT', 'DELIVERED', 'READ', 'FAILED'] as const) assert.deepEqual(transitionsFor('CANCELED', to), []);
    assert.deepEqual(transitionsForReport('CANCELED', 'FAILED'), [], 'a late provider report changes nothing');
  });

  it('names webhook events', () => {
    assert.equal(eventTypeOf('SENT'), 'message.sent');
    assert.equal(eventTypeOf('FAILED'), 'message.failed');
  });

  it('takes a provider’s report of a failure as coming after the submission it overtook', () => {
    assert.deepEqual(transitionsForReport('QUEUED', 'FAILED'), ['SENT', 'FAILED']);
    assert.deepEqual(transitionsForReport('SENT', 'FAILED'), ['FAILED']);
    assert.deepEqual(transitionsForReport('QUEUED', 'READ'), ['SENT', 'DELIVERED', 'READ']);
    assert.deepEqual(transitionsForReport('READ', 'FAILED'), []);
    assert.deepEqual(transitionsFor('QUEUED', 'FAILED'), ['FAILED'], 'svc’s own give-up after retries stays direct');
  });
});
