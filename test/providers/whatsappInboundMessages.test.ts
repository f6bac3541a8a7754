import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inboundReportsOf } from '../../src/providers/whatsapp/inboundMessages.ts';

// The parser of Meta's inbound notifications, on the examples of Meta's webhooks reference.

const NOW = 1_750_100_000_000;

function notification(field: string, value: Record<string, unknown>) {
  return { object: 'whatsapp_business_account', entry: [{ id: '102290129340398', changes: [{ value, field }] }] };
}

const METADATA = { display_phone_number: '15550783881', phone_number_id: '106540352242922' };

describe('WhatsApp inbound messages', () => {
  it('reads a quick-reply tap, an interactive button reply and a text, with their context', () => {
    const reports = inboundReportsOf(
      notification('messages', {
        messaging_product: 'whatsapp',
        metadata: METADATA,
        contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
        messages: [
          {
            context: { from: '15550783881', id: 'wamid.OURS=' },
            from: '16505551234',
            id: 'wamid.TAP=',
            timestamp: '1750091045',
            type: 'button',
            button: { payload: 'Unsubscribe', text: 'Unsubscribe' },
          },
          {
            context: { from: '15550783881', id: 'wamid.OURS=' },
            from: '16505551234',
            id: 'wamid.INTERACTIVE=',
            timestamp: '1750091046',
            type: 'interactive',
            interactive: { type: 'button_reply', button_reply: { id: 'confirm', title: 'Yes' } },
          },
          { from: '16505551234', id: 'wamid.TEXT=', timestamp: '1749416383', type: 'text', text: { body: 'Does it come in another color?' } },
          { from: '16505551234', id: 'wamid.IMAGE=', timestamp: '1749416384', type: 'image', image: { id: '1' } },
        ],
      }),
      NOW,
    );
    assert.deepEqual(reports.preferences, []);
    assert.deepEqual(reports.messages, [
      {
        phoneNumberId: '106540352242922',
        from: '+16505551234',
        providerMessageId: 'wamid.TAP=',
        inReplyTo: 'wamid.OURS=',
        reply: { type: 'button', text: 'Unsubscribe', payload: 'Unsubscribe' },
        occurredAt: 1_750_091_045_000,
      },
      {
        phoneNumberId: '106540352242922',
        from: '+16505551234',
        providerMessageId: 'wamid.INTERACTIVE=',
        inReplyTo: 'wamid.OURS=',
        reply: { type: 'button', text: 'Yes', payload: 'confirm' },
        occurredAt: 1_750_091_046_000,
      },
      {
        phoneNumberId: '106540352242922',
        from: '+16505551234',
        providerMessageId: 'wamid.TEXT=',
        reply: { type: 'text', text: 'Does it come in another color?' },
        occurredAt: 1_749_416_383_000,
      },
      { phoneNumberId: '106540352242922', from: '+16505551234', providerMessageId: 'wamid.IMAGE=', occurredAt: 1_749_416_384_000 },
    ]);
  });

  it('reads user_preferences stop and resume, and skips other categories and values', () => {
    const preference = (value: string, category = 'marketing_messages') => ({
      wa_id: '16505551234',
      detail: 'User requested to stop marketing messages',
      category,
      value,
      timestamp: 1731705721,
    });
    const reports = inboundReportsOf(
      notification('user_preferences', {
        messaging_product: 'whatsapp',
        metadata: METADATA,
        contacts: [{ wa_id: '16505551234' }],
        user_preferences: [preference('stop'), preference('resume'), preference('pause'), preference('stop', 'other')],
      }),
      NOW,
    );
    assert.deepEqual(reports.preferences, [
      { phoneNumberId: '106540352242922', from: '+16505551234', value: 'stop', occurredAt: 1_731_705_721_000 },
      { phoneNumberId: '106540352242922', from: '+16505551234', value: 'resume', occurredAt: 1_731_705_721_000 },
    ]);
  });

  it('skips what is not Meta’s shape, and keeps times sane', () => {
    const hostile = [
      null,
      {},
      { object: 'instagram', entry: [] },
      { object: 'whatsapp_business_account', entry: 'x' },
      notification('messages', { messages: [{ from: '16505551234', id: 'w', type: 'text', text: { body: 'no metadata' } }] }),
      notification('messages', { metadata: METADATA, messages: [{ from: '+1', id: 'w', type: 'text', text: { body: 'short' } }] }),
      notification('messages', { metadata: METADATA, messages: [{ from: '16505551234', type: 'text', text: { body: 'no id' } }] }),
      notification('messages', { metadata: METADATA, messages: [[], 'x', 1] }),
    ];
    for (const payload of hostile) assert.deepEqual(inboundReportsOf(payload, NOW).messages, [], JSON.stringify(payload));
    const [future] = inboundReportsOf(
      notification('messages', {
        metadata: METADATA,
        messages: [{ from: '16505551234', id: 'w', timestamp: '99999999999', type: 'text', text: { body: 'x'.repeat(5000) } }],
      }),
      NOW,
    ).messages;
    assert.ok(future!.occurredAt <= NOW + 60_000);
    assert.equal(future!.reply?.text.length, 4096);
  });
});
