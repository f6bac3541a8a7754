import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reportedTime } from '../../src/domain/reportedTime.ts';
import { registeredComponents } from '../../src/domain/templates.ts';
import { createTemplatePayload, sameTemplate, sendMessagePayload } from '../../src/providers/whatsapp/payloads.ts';
import { reportsOf } from '../../src/providers/whatsapp/webhook.ts';

// The JSON svc exchanges with Meta, checked against the shapes of Meta's reference.

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

function webhook(field: string, value: unknown, extra: Record<string, unknown> = {}) {
  return { object: 'whatsapp_business_account', entry: [{ id: '102290129340398', time: 1772366400, changes: [{ field, value }], ...extra }] };
}

function statusOf(timestamp: unknown) {
  return webhook('messages', {
    metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
    statuses: [{ id: 'wamid.1', status: 'delivered', timestamp, recipient_id: '5511987654321', biz_opaque_callback_data: 'msg_1' }],
  });
}

const submission = (category: string, components: any[]) => ({
  templateId: 'tpl_1',
  projectId: 'proj_1',
  name: 'verify_code',
  language: 'pt_BR',
  category,
  components: registeredComponents({ name: 'verify_code', language: 'pt_BR', category, components }),
  credentials: undefined,
  businessAccountId: '102290129340398',
});

describe('WhatsApp webhook payloads', () => {
  it('reads statuses with the sending number they came from', () => {
    const { messages } = reportsOf(statusOf('1772366400'), NOW);
    assert.deepEqual(messages, [
      {
        kind: 'message',
        providerMessageId: 'wamid.1',
        messageId: 'msg_1',
        phoneNumberId: '106540352242922',
        status: 'DELIVERED',
        occurredAt: 1772366400_000,
        recipient: { phone: '+5511987654321' },
      },
    ]);
  });

  it('reads the recipient’s identities a status names: phone (recipient_id), BSUID (recipient_user_id), either or both', () => {
    const named = (extra: Record<string, unknown>) => {
      const payload = statusOf('1772366400') as any;
      Object.assign(payload.entry[0].changes[0].value.statuses[0], extra);
      return reportsOf(payload, NOW).messages[0]!.recipient;
    };
    assert.deepEqual(named({ recipient_user_id: 'BR.123abc' }), { phone: '+5511987654321', userId: 'BR.123abc' });
    assert.deepEqual(named({ recipient_id: '', recipient_user_id: 'US.ENT.99' }), { userId: 'US.ENT.99' });
    assert.equal(named({ recipient_id: '', recipient_user_id: 'not a bsuid' }), undefined);
    assert.equal(named({ recipient_id: 'abc' }), undefined);
  });

  it('never takes an absurd or unreadable timestamp as it is', () => {
    for (const timestamp of ['10000000000000', 1e300, '1e400', {}, [], null, '-5', 'soon', true]) {
      const [report] = reportsOf(statusOf(timestamp), NOW).messages;
      assert.ok(report!.occurredAt <= NOW + 60_000, JSON.stringify(timestamp));
      assert.ok(Number.isFinite(new Date(report!.occurredAt).getTime()), JSON.stringify(timestamp));
    }
    assert.equal(reportsOf(statusOf('10000000000000'), NOW).messages[0]!.occurredAt, NOW + 60_000);
    assert.equal(reportsOf(statusOf({}), NOW).messages[0]!.occurredAt, NOW);
  });

  it('keeps every reported time between the earliest it can be and now plus a minute', () => {
    assert.equal(reportedTime(5, { notBefore: 100, now: NOW }), 100);
    assert.equal(reportedTime(NOW + 3_600_000, { notBefore: 100, now: NOW }), NOW + 60_000);
    assert.equal(reportedTime(Number.NaN, { notBefore: 100, now: NOW }), NOW);
    assert.equal(reportedTime(NOW - 5, { notBefore: 100, now: NOW }), NOW - 5);
  });

  it('skips other products, statuses svc has no state for, and anything malformed', () => {
    const empty = { messages: [], templates: [], categories: [], accountChanges: [], volumeTiers: [] };
    assert.deepEqual(reportsOf({ ...statusOf('1'), object: 'page' }, NOW), empty);
    assert.deepEqual(reportsOf({ entry: statusOf('1').entry }, NOW), empty, 'no object: not WhatsApp');
    const reports = reportsOf(
      {
        object: 'whatsapp_business_account',
        entry: [
          { changes: [{ field: 'messages', value: { statuses: [{ id: 'wamid.1', status: 'deleted', timestamp: '1' }, { status: 'read' }, null] } }] },
          { changes: [{ field: 'message_template_status_update', value: { event: 'MYSTERY', message_template_id: 1 } }] },
          { changes: [{ field: 'message_template_status_update', value: { event: 'toString', message_template_id: 1 } }] },
          { changes: [{ field: 'account_update', value: { event: 'VERIFIED_ACCOUNT' } }] },
          null,
        ],
      },
      NOW,
    );
    assert.deepEqual(reports, empty);
    assert.deepEqual(reportsOf('nonsense', NOW), empty);
  });

  it('maps Meta’s template events to a review outcome and Meta’s own status, with its details', () => {
    const update = (value: Record<string, unknown>) =>
      reportsOf(webhook('message_template_status_update', { message_template_id: 1689556908129832, reason: 'NONE', ...value }), NOW).templates[0];
    assert.deepEqual(update({ event: 'APPROVED' }), {
      providerTemplateId: '1689556908129832',
      businessAccountId: '102290129340398',
      status: 'APPROVED',
      providerStatus: 'APPROVED',
      occurredAt: 1772366400_000,
    });
    const rejected = update({
      event: 'REJECTED',
      reason: 'INVALID_FORMAT',
      rejection_info: { reason: 'Parameters are next to each other.', recommendation: 'Separate them with text.' },
    })!;
    assert.equal(rejected.status, 'REJECTED');
    assert.equal(rejected.reason, 'Rejected by WhatsApp: INVALID_FORMAT. Parameters are next to each other. Separate them with text.');
    const paused = update({ event: 'PAUSED', other_info: { title: 'FIRST_PAUSE', description: 'Paused for 3 hours.' } })!;
    assert.deepEqual([paused.status, paused.providerStatus], ['APPROVED', 'PAUSED']);
    assert.match(paused.reason!, /FIRST_PAUSE Paused for 3 hours/);
    const disabled = update({ event: 'DISABLED', disable_info: { disable_date: 1772366400 } })!;
    assert.deepEqual([disabled.status, disabled.providerStatus], ['REJECTED', 'DISABLED']);
    assert.match(disabled.reason!, /Disabled on 2026-03-01/);
    assert.equal(update({ event: 'DISABLED', disable_info: { disable_date: { bad: 1 } } })!.providerStatus, 'DISABLED');
    assert.deepEqual([update({ event: 'REINSTATED' })!.status, update({ event: 'REINSTATED' })!.providerStatus], ['APPROVED', 'APPROVED']);
    assert.deepEqual([update({ event: 'FLAGGED' })!.providerStatus, update({ event: 'IN_APPEAL' })!.status], ['FLAGGED', undefined]);
  });

  it('reads category changes, made and announced', () => {
    const made = reportsOf(
      webhook('template_category_update', {
        message_template_id: 278077987957091,
        message_template_name: 'welcome_template',
        message_template_language: 'en-US',
        previous_category: 'UTILITY',
        new_category: 'MARKETING',
      }),
      NOW,
    ).categories;
    assert.deepEqual(made, [
      { providerTemplateId: '278077987957091', businessAccountId: '102290129340398', category: 'MARKETING', occurredAt: 1772366400_000 },
    ]);
    const announced = reportsOf(
      webhook('template_category_update', {
        message_template_id: 278077987957091,
        new_category: 'UTILITY',
        correct_category: 'MARKETING',
        category_update_timestamp: 1772452800,
      }),
      NOW,
    ).categories[0]!;
    assert.deepEqual(announced.upcoming, { category: 'MARKETING', effectiveAt: 1772452800_000 });
    assert.equal(announced.category, 'UTILITY', 'the current category, unchanged for now');
  });

  it('notes the accounts whose numbers changed throughput', () => {
    const reports = reportsOf(
      webhook('phone_number_quality_update', { display_phone_number: '15550783881', event: 'THROUGHPUT_UPGRADE', current_limit: 'TIER_UNLIMITED' }),
      NOW,
    );
    assert.deepEqual(reports.accountChanges, ['102290129340398']);
  });
});

describe('WhatsApp request payloads', () => {
  const message = {
    messageId: 'msg_1',
    projectId: 'proj_1',
    to: '+5511987654321',
    templateName: 'verify_code',
    language: 'pt_BR',
    category: 'AUTHENTICATION',
    bodyParameters: ['482913'],
    headerParameters: [],
    credentials: { sender: '1', secret: 't' },
  };

  it('sends the recipient in full E.164, with its +', () => {
    assert.equal(sendMessagePayload(message, false).to, '+5511987654321');
  });

  it('fills an authentication template’s OTP button with the same code as its body', () => {
    assert.deepEqual(sendMessagePayload(message, true).template.components, [
      { type: 'body', parameters: [{ type: 'text', text: '482913' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '482913' }] },
    ]);
    assert.ok(!JSON.stringify(sendMessagePayload(message, false)).includes('button'));
  });

  it('submits an authentication template in Meta’s model: no texts, expiry, OTP button', () => {
    const payload = createTemplatePayload(
      submission('AUTHENTICATION', [
        { type: 'BODY', add_security_recommendation: true },
        { type: 'FOOTER', code_expiration_minutes: 10 },
        { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'copy_code', text: 'Copiar código' }] },
      ]),
    );
    assert.deepEqual(payload.components, [
      { type: 'BODY', add_security_recommendation: true },
      { type: 'FOOTER', code_expiration_minutes: 10 },
      { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copiar código' }] },
    ]);
  });

  it('sends the customer’s examples as given, and derives language-neutral ones otherwise', () => {
    const given = createTemplatePayload(
      submission('MARKETING', [
        { type: 'HEADER', text: 'Oferta {{1}}', example: { header_text: ['Verão'] } },
        { type: 'BODY', text: 'Olá {{1}}, use {{2}} hoje.', example: { body_text: [['Ana', 'VERAO10']] } },
      ]),
    );
    assert.deepEqual(given.components, [
      { type: 'HEADER', format: 'TEXT', text: 'Oferta {{1}}', example: { header_text: ['Verão'] } },
      { type: 'BODY', text: 'Olá {{1}}, use {{2}} hoje.', example: { body_text: [['Ana', 'VERAO10']] } },
    ]);
    const derived = createTemplatePayload(submission('UTILITY', [{ type: 'BODY', text: 'Olá {{1}}, pedido {{2}} enviado.' }]));
    assert.deepEqual(derived.components, [{ type: 'BODY', text: 'Olá {{1}}, pedido {{2}} enviado.', example: { body_text: [['1111', '2222']] } }]);
    assert.ok(!/sample/i.test(JSON.stringify(derived)));
  });

  it('adopts a template Meta already has only when its texts are the ones registered', () => {
    const template = submission('UTILITY', [{ type: 'BODY', text: 'Olá {{1}}, pedido enviado.' }]);
    assert.equal(sameTemplate({ components: [{ type: 'BODY', text: 'Olá {{1}}, pedido enviado.' }] }, template), true);
    assert.equal(sameTemplate({ components: [{ type: 'BODY', text: 'Old text {{1}}.' }] }, template), false);
    assert.equal(
      sameTemplate({ components: [{ type: 'HEADER', text: 'Extra' }, { type: 'BODY', text: 'Olá {{1}}, pedido enviado.' }] }, template),
      false,
    );
  });
});
