import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ComponentDraft, registeredComponents, sendProblem, validateTemplate } from '../../src/domain/templates.ts';

// Meta's authentication-template model and example values, as svc checks them at registration
// (for every provider: the sandbox applies the same rules).

const COPY_CODE = { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE' }] };

function authentication(components: ComponentDraft[]) {
  return validateTemplate({ name: 'verify', language: 'en_US', category: 'AUTHENTICATION', components });
}

function utility(components: ComponentDraft[]) {
  return validateTemplate({ name: 'order', language: 'en_US', category: 'UTILITY', components });
}

function codes(errors: ReturnType<typeof validateTemplate>): [string, string][] {
  return errors.map((error) => [error.field, error.code]);
}

describe('authentication templates', () => {
  it('accept Meta’s model: preset body, optional security note and expiry, one OTP button', () => {
    assert.deepEqual(authentication([{ type: 'BODY' }, COPY_CODE]), []);
    assert.deepEqual(
      authentication([
        { type: 'BODY', add_security_recommendation: true },
        { type: 'FOOTER', code_expiration_minutes: 90 },
        { type: 'BUTTONS', buttons: [{ type: 'otp', otp_type: 'one_tap', text: 'Copy', autofill_text: 'Autofill', supported_apps: [{ package_name: 'com.example.app', signature_hash: 'K8a/AINcGX7' }] }] },
      ]),
      [],
    );
    assert.deepEqual(authentication([{ type: 'BODY', text: 'Seu código é {{1}}.' }, COPY_CODE]), [], 'a rendering of the preset with {{1}}');
  });

  it('fill in the preset texts left out', () => {
    const components = registeredComponents({
      name: 'verify',
      language: 'en_US',
      category: 'AUTHENTICATION',
      components: [{ type: 'BODY', add_security_recommendation: true }, { type: 'FOOTER', code_expiration_minutes: 1 }, COPY_CODE],
    });
    assert.deepEqual(components, [
      { type: 'BODY', add_security_recommendation: true, text: '*{{1}}* is your verification code. For your security, do not share this code.' },
      { type: 'FOOTER', code_expiration_minutes: 1, text: 'This code expires in 1 minute.' },
      COPY_CODE,
    ]);
  });

  it('refuse what Meta’s model has no room for, saying what to do', () => {
    const cases: [ComponentDraft[], [string, string][]][] = [
      [[{ type: 'BODY' }], [['/components', 'missing_buttons']]],
      [[{ type: 'HEADER', text: 'Code' }, { type: 'BODY' }, COPY_CODE], [['/components/0/type', 'not_allowed']]],
      [[{ type: 'BODY', text: 'Code {{1}} and {{2}}' }, COPY_CODE], [['/components/0/text', 'authentication_body']]],
      [[{ type: 'BODY', text: 'No code here' }, COPY_CODE], [['/components/0/text', 'authentication_body']]],
      [[{ type: 'BODY', example: { body_text: [['1']] } }, COPY_CODE], [['/components/0/example', 'not_allowed']]],
      [[{ type: 'BODY' }, { type: 'FOOTER' }, COPY_CODE], [['/components/1/code_expiration_minutes', 'required']]],
      [[{ type: 'BODY' }, { type: 'FOOTER', code_expiration_minutes: 91 }, COPY_CODE], [['/components/1/code_expiration_minutes', 'out_of_range']]],
      [[{ type: 'BODY' }, { type: 'FOOTER', code_expiration_minutes: 0 }, COPY_CODE], [['/components/1/code_expiration_minutes', 'out_of_range']]],
      [[{ type: 'BODY' }, { type: 'BUTTONS', buttons: [] }], [['/components/1/buttons', 'invalid_count']]],
      [[{ type: 'BODY' }, { type: 'BUTTONS' }], [['/components/1/buttons', 'required']]],
      [[{ type: 'BODY' }, { type: 'BUTTONS', text: 'x', buttons: COPY_CODE.buttons }], [['/components/1/text', 'not_allowed']]],
      [[{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'URL', otp_type: 'COPY_CODE' }] }], [['/components/1/buttons/0/type', 'invalid_value']]],
      [[{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'OTP' }] }], [['/components/1/buttons/0/otp_type', 'required']]],
      [[{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'ZERO_TAP' }] }], [['/components/1/buttons/0/otp_type', 'not_supported']]],
      [[{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY', text: 'x' }] }], [['/components/1/buttons/0/otp_type', 'invalid_value']]],
      [[{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'x'.repeat(26) }] }], [['/components/1/buttons/0/text', 'too_long']]],
      [[{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'ONE_TAP' }] }], [['/components/1/buttons/0/supported_apps', 'required']]],
      [
        [{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'ONE_TAP', supported_apps: [{ package_name: 'app', signature_hash: 'short' }] }] }],
        [
          ['/components/1/buttons/0/supported_apps/0/package_name', 'invalid_format'],
          ['/components/1/buttons/0/supported_apps/0/signature_hash', 'invalid_format'],
        ],
      ],
      [
        [{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', supported_apps: [] }] }],
        [['/components/1/buttons/0/supported_apps', 'not_allowed']],
      ],
    ];
    for (const [components, expected] of cases) {
      const errors = authentication(components);
      assert.deepEqual(codes(errors), expected, JSON.stringify(components));
      for (const error of errors) assert.ok(error.message.length > 15, error.message);
    }
  });

  it('keep their fields out of other templates', () => {
    assert.deepEqual(codes(utility([{ type: 'BODY', text: 'Hi', add_security_recommendation: true }])), [
      ['/components/0/add_security_recommendation', 'not_allowed'],
    ]);
    assert.deepEqual(codes(utility([{ type: 'BODY', text: 'Hi' }, { type: 'FOOTER', text: 'f', code_expiration_minutes: 5 }])), [
      ['/components/1/code_expiration_minutes', 'not_allowed'],
    ]);
    // An OTP button belongs to AUTHENTICATION templates; other templates have their own buttons (templateButtons.ts).
    assert.deepEqual(codes(utility([{ type: 'BODY', text: 'Hi' }, COPY_CODE])), [['/components/1/buttons/0/type', 'not_allowed']]);
  });
});

describe('example values', () => {
  it('take one value per placeholder, in Meta’s shape', () => {
    assert.deepEqual(
      utility([
        { type: 'HEADER', text: 'Pedido {{1}}', example: { header_text: ['#1001'] } },
        { type: 'BODY', text: 'Olá {{1}}, pedido {{2}}, de novo {{1}}.', example: { body_text: [['Ana', '#1001']] } },
      ]),
      [],
    );
  });

  it('refuse examples that do not fit the text', () => {
    const cases: [ComponentDraft[], [string, string][]][] = [
      [[{ type: 'BODY', text: 'Hi {{1}} {{2}}', example: { body_text: [['Ana']] } }], [['/components/0/example/body_text/0', 'example_mismatch']]],
      [[{ type: 'BODY', text: 'Hi {{1}}', example: { body_text: [['Ana'], ['Bia']] } }], [['/components/0/example/body_text', 'example_mismatch']]],
      [[{ type: 'BODY', text: 'Hi {{1}}', example: {} }], [['/components/0/example/body_text', 'required']]],
      [[{ type: 'BODY', text: 'Hi {{1}}', example: { header_text: ['x'], body_text: [['Ana']] } }], [['/components/0/example/header_text', 'not_allowed']]],
      [[{ type: 'BODY', text: 'Hi there', example: { body_text: [['Ana']] } }], [['/components/0/example', 'not_allowed']]],
      [[{ type: 'BODY', text: 'Hi' }, { type: 'FOOTER', text: 'Bye', example: { body_text: [['x']] } }], [['/components/1/example', 'not_allowed']]],
      [[{ type: 'HEADER', text: 'Order {{1}}', example: { header_text: [] } }, { type: 'BODY', text: 'Hi' }], [['/components/0/example/header_text', 'example_mismatch']]],
      [[{ type: 'BODY', text: 'Hi {{1}}', example: { body_text: [[' ']] } }], [['/components/0/example/body_text/0/0', 'too_short']]],
      [[{ type: 'BODY', text: 'Hi {{1}}', example: { body_text: [['a\nb']] } }], [['/components/0/example/body_text/0/0', 'provider_rule']]],
      [[{ type: 'BODY', text: 'Hi {{1}}', example: { body_text: [['{{1}}']] } }], [['/components/0/example/body_text/0/0', 'provider_rule']]],
      [[{ type: 'HEADER', text: 'Order {{1}}', example: { header_text: ['x'.repeat(61)] } }, { type: 'BODY', text: 'Hi' }], [['/components/0/example/header_text/0', 'too_long']]],
    ];
    for (const [components, expected] of cases) assert.deepEqual(codes(utility(components)), expected, JSON.stringify(components));
  });
});

describe('sendability', () => {
  const template = { name: 'order', language: 'en_US', status: 'APPROVED', providerStatus: null, providerStatusReason: null };

  it('follows the review outcome, then the provider’s own status', () => {
    assert.equal(sendProblem(template), undefined);
    for (const providerStatus of ['APPROVED', 'FLAGGED', 'LOCKED']) assert.equal(sendProblem({ ...template, providerStatus }), undefined, providerStatus);
    for (const providerStatus of ['PAUSED', 'DISABLED', 'PENDING_DELETION', 'DELETED', 'REJECTED', 'PENDING', 'IN_APPEAL']) {
      assert.match(sendProblem({ ...template, providerStatus, providerStatusReason: 'why' })!, new RegExp(`${providerStatus} at the provider \\(why\\)`));
    }
    assert.match(sendProblem({ ...template, status: 'PENDING' })!, /is PENDING; only APPROVED templates can send/);
  });
});
