import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { templateButtonsErrors } from '../../src/domain/templateButtons.ts';
import { messageFieldProblems, renderMessage, richParameters, templateShape } from '../../src/domain/templateMessage.ts';
import type { TemplateComponent } from '../../src/providers/provider.ts';

const BODY: TemplateComponent = { type: 'BODY', text: 'Hi {{1}}.' };

describe('a rich template’s send (CONTRACT §9)', () => {
  it('the spec’s template is not rich and takes nothing more', () => {
    const shape = templateShape([{ type: 'HEADER', format: 'TEXT', text: 'Order {{1}}' }, BODY, { type: 'FOOTER', text: 'Acme' }]);
    assert.equal(shape.rich, false);
    assert.equal(richParameters(shape, { variables: { '1': 'Ana' } }), undefined);
    assert.deepEqual(messageFieldProblems(shape, { variables: { '1': 'Ana' }, headerVariables: { '1': 'A-1' } }), []);
    assert.deepEqual(messageFieldProblems(shape, { variables: { '1': 'Ana' }, headerVariables: { '1': 'A-1' }, buttons: { '0': { payload: 'x' } } }), [
      'buttons has "0", which names no button of the template',
    ]);
  });

  it('names every missing and extra value at once', () => {
    const shape = templateShape(
      [{ type: 'HEADER', format: 'VIDEO', example: { header_handle: ['h'] } }, { type: 'BODY', text: 'Hi {{name}}, {{code}}.' }],
      'NAMED',
    );
    assert.deepEqual(messageFieldProblems(shape, { variables: { name: 'Ana', extra: 'x' }, headerLocation: { latitude: 0, longitude: 0 } }), [
      'variables is missing "code"',
      'variables has "extra", which the template does not use',
      'headerMedia is missing: the template has a VIDEO header',
      'headerLocation is given, but the template has no LOCATION header',
    ]);
  });

  it('resolves a location header, named parameters and a default quick-reply payload for the provider', () => {
    const shape = templateShape(
      [
        { type: 'HEADER', format: 'LOCATION' },
        { type: 'BODY', text: 'Hi {{first_name}}.' },
        { type: 'BUTTONS', buttons: [{ type: 'PHONE_NUMBER', text: 'Call', phone_number: '+15550051310' }, { type: 'QUICK_REPLY', text: 'Stop' }] },
      ],
      'NAMED',
    );
    const fields = { variables: { first_name: 'Ana' }, headerLocation: { latitude: 1.5, longitude: -2, address: 'Rua A' } };
    assert.deepEqual(richParameters(shape, fields), {
      named: true,
      header: { type: 'location', latitude: 1.5, longitude: -2, address: 'Rua A' },
      buttons: [{ subType: 'quick_reply', index: '1', payload: 'Stop' }],
    });
    assert.deepEqual(renderMessage(shape, fields), {
      header: { type: 'LOCATION', latitude: 1.5, longitude: -2, address: 'Rua A' },
      body: 'Hi Ana.',
      buttons: [
        { type: 'PHONE_NUMBER', text: 'Call', phoneNumber: '+15550051310' },
        { type: 'QUICK_REPLY', text: 'Stop', payload: 'Stop' },
      ],
    });
  });
});

describe('button rules', () => {
  const quick = { type: 'QUICK_REPLY', text: 'Yes' };
  const url = { type: 'URL', text: 'Go', url: 'https://x.example/a' };
  it('groups quick replies before or after the others, never around them', () => {
    assert.deepEqual(templateButtonsErrors([quick, quick, url], '/c'), []);
    assert.deepEqual(templateButtonsErrors([url, quick, quick], '/c'), []);
    assert.deepEqual(
      templateButtonsErrors([quick, url, quick], '/c').map((error) => [error.field, error.code]),
      [['/c/buttons/1', 'buttons_not_grouped']],
    );
  });

  it('takes a phone number with or without its +, and refuses an impossible one', () => {
    assert.deepEqual(templateButtonsErrors([{ type: 'PHONE_NUMBER', text: 'Call', phone_number: '15550051310' }], '/c'), []);
    assert.deepEqual(
      templateButtonsErrors([{ type: 'PHONE_NUMBER', text: 'Call', phone_number: '+999123' }], '/c').map((error) => error.code),
      ['invalid_phone'],
    );
  });
});
