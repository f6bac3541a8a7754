import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fastJson from 'fast-json-stringify';
import { type MessageRow, type NewMessage, queuedMessageRow } from '../../src/db/messages.ts';
import { renderMessage, templateShape } from '../../src/domain/templateMessage.ts';
import { acceptedMessageJson, messageJson, MessageView, messageView } from '../../src/http/routes/messages.ts';
import type { TemplateComponent } from '../../src/providers/provider.ts';

// Messages are answered as JSON written straight from their rows (issue #11): the bytes must be
// those the route's response schema gave before — its serialiser (fast-json-stringify, as Fastify
// compiles it) applied to messageView(row) — for every kind of message.

const serialise = fastJson(MessageView as object);

function richContents(): Omit<NewMessage, 'projectId' | 'to' | 'template'>[] {
  const body = { type: 'BODY', text: 'Hi {{1}} "☃"' } as const;
  const buttons = {
    type: 'BUTTONS',
    buttons: [
      { type: 'QUICK_REPLY', text: 'Yes' },
      { type: 'URL', text: 'Track', url: 'https://x.example/t/{{1}}', example: ['1'] },
      { type: 'PHONE_NUMBER', text: 'Call', phone_number: '+15550051310' },
      { type: 'COPY_CODE', example: 'SAVE' },
    ],
  } as const;
  const cases: [TemplateComponent[], object][] = [
    [
      [{ type: 'HEADER', format: 'DOCUMENT', example: { header_handle: ['h'] } }, body, { type: 'FOOTER', text: 'Acme' }, buttons as never],
      { headerMedia: { link: 'https://cdn.example.com/a "b".pdf', filename: 'a.pdf' }, buttons: { '1': { text: 'A/1?x=</script>' }, '3': { couponCode: 'C1' } } },
    ],
    [[{ type: 'HEADER', format: 'LOCATION' }, body], { headerLocation: { latitude: -23.5505, longitude: -46.6333, name: 'Sé', address: 'Praça da Sé' } }],
    [[body, buttons as never], { buttons: { '0': { payload: 'P' }, '1': { text: 'x' }, '3': { couponCode: 'C' } } }],
  ];
  return cases.map(([components, fields]) => ({
    variables: { '1': 'Ana' },
    content: renderMessage(templateShape(components), { variables: { '1': 'Ana' }, ...fields }),
  }));
}

describe('a message as JSON', () => {
  const template = { id: 'tpl_01', name: 'order_update', language: 'pt_BR', category: 'UTILITY' };
  const messages: Omit<NewMessage, 'projectId' | 'to' | 'template'>[] = [
    { variables: { '1': 'Ana', '2': 'A-1001' }, content: { body: 'Olá Ana, pedido A-1001.' } },
    {
      variables: { '2': 'Zoë "Z" \\ ☃ \u2028', '1': '</script>', '10': 'x' },
      headerVariables: { '1': '#1001' },
      content: { header: 'Pedido #1001', body: 'Olá 😀\ttab', footer: 'Acme' },
    },
    { variables: {}, content: { body: 'No variables', footer: 'Acme' } },
    // Rich templates (CONTRACT §9): a media or location header and buttons, as the send renders them.
    ...richContents(),
  ];
  const queued = messages.map((message, index) =>
    queuedMessageRow({ projectId: 'proj_01', to: '+5511987654321', template, ...message }, 1_795_000_000_123 + index),
  );
  const later: MessageRow[] = [
    { ...queued[0]!, status: 'SENT', sent_at: 1_795_000_001_000, provider_message_id: 'wamid.x"y', updated_at: 1_795_000_001_000 },
    { ...queued[1]!, status: 'READ', sent_at: 1, delivered_at: 2, read_at: 3, provider_message_id: 'wamid.2', updated_at: 3 },
    {
      ...queued[2]!,
      status: 'FAILED',
      failed_at: 5,
      error: JSON.stringify({ message: 'Message undeliverable "now"', title: 'Undeliverable', code: '131026', extra: 'not in the schema' }),
    },
    // An error kept on a message that is not FAILED is not shown (messageView's rule).
    { ...queued[0]!, status: 'SENT', error: JSON.stringify({ code: '1', title: 't', message: 'm' }) },
    // The API that took it and the recipient's other identity (issue 23).
    { ...queued[0]!, status: 'SENT', send_route: 'marketing_messages', recipient_user_id: 'US.13491208655302741918' },
    { ...queued[1]!, recipient: 'US.ENT.1181579921', status: 'DELIVERED', send_route: 'cloud_api', recipient_phone: '+5511987654321' },
    // Priced by Meta: not delivered yet (cost null), delivered and charged, delivered free.
    { ...queued[0]!, status: 'SENT', sent_at: 1, pricing: JSON.stringify({ billable: true, pricingModel: 'PMP', category: 'marketing', type: 'regular' }) },
    {
      ...queued[1]!,
      status: 'DELIVERED',
      sent_at: 1,
      delivered_at: 2,
      pricing: JSON.stringify({ billable: true, pricingModel: 'PMP', category: 'authentication-international', type: 'regular' }),
      cost: JSON.stringify({ amount: 0.0625, currency: 'USD' }),
    },
    {
      ...queued[2]!,
      status: 'READ',
      delivered_at: 2,
      read_at: 3,
      pricing: JSON.stringify({ billable: false, pricingModel: 'PMP', category: 'utility', type: 'free_customer_service' }),
      cost: null,
      held_at: 1,
    },
  ];

  for (const [index, row] of [...queued, ...later].entries()) {
    it(`is what the response schema serialises, ${row.status} case ${index + 1}`, () => {
      assert.equal(messageJson(row), serialise(messageView(row)));
      assert.deepEqual(JSON.parse(messageJson(row)), JSON.parse(serialise(messageView(row))));
    });
  }

  it('shows cost beside pricing, and neither before Meta priced the message', () => {
    const [unpriced, undelivered, charged, free] = [queued[0]!, ...later.slice(6)].map((row) => JSON.parse(messageJson(row)));
    assert.ok(!('pricing' in unpriced) && !('cost' in unpriced));
    assert.equal(undelivered.pricing.category, 'marketing');
    assert.equal(undelivered.cost, null);
    assert.deepEqual(charged.cost, { amount: 0.0625, currency: 'USD' });
    assert.equal(free.cost, null);
  });

  it('the 202 of a queued message is the same bytes', () => {
    for (const row of queued) assert.equal(acceptedMessageJson(row), JSON.stringify(messageView(row)));
  });
});
