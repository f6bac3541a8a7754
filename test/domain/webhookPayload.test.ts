import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { webhookEventOf, webhookPayload } from '../../src/domain/webhookPayload.ts';
import { newUuid7 } from '../../src/domain/uuid7.ts';

describe('webhook payload', () => {
  const base = {
    messageId: 'msg_1',
    to: '+14155550100',
    template: 'order_update',
    providerMessageId: 'wamid.1',
    occurredAt: Date.parse('2026-11-22T10:00:00.123Z'),
  };

  it('has the spec’s seven fields, in order, and error only for message.failed', () => {
    assert.equal(
      webhookPayload({ ...base, status: 'DELIVERED', error: { code: '1', title: 't', message: 'm' } }),
      '{"event":"message.delivered","message_id":"msg_1","to":"+14155550100","template":"order_update",' +
        '"status":"DELIVERED","provider_message_id":"wamid.1","occurred_at":"2026-11-22T10:00:00.123Z"}',
    );
    const failed = JSON.parse(
      webhookPayload({ ...base, status: 'FAILED', error: { code: '131026', title: 'Undeliverable', message: 'Gone.' } }),
    );
    assert.deepEqual(failed.error, { code: '131026', title: 'Undeliverable', message: 'Gone.' });
    assert.equal(failed.event, 'message.failed');
  });

  it('names each status’s event', () => {
    assert.deepEqual(
      (['SENT', 'DELIVERED', 'READ', 'FAILED'] as const).map(webhookEventOf),
      ['message.sent', 'message.delivered', 'message.read', 'message.failed'],
    );
  });
});

describe('UUIDv7 delivery ids', () => {
  it('are version-7 UUIDs that strictly increase, even within one millisecond', () => {
    const ids = Array.from({ length: 5000 }, () => newUuid7(1_795_000_000_000));
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i]! > ids[i - 1]!, `${ids[i]} > ${ids[i - 1]}`);
    assert.ok(newUuid7(1_795_000_000_001) > ids.at(-1)!);
    assert.equal(ids[0]!.replace(/-/g, '').slice(0, 12), (1_795_000_000_000).toString(16).padStart(12, '0'));
  });
});
