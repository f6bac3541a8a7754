import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type NewMessage, queuedMessageRow } from '../../src/db/messages.ts';
import { acceptedMessageJson, messageView } from '../../src/http/routes/messages.ts';

// The 202 of POST /v1/messages is written straight from the message row (issue #11): it must be
// byte for byte what serialising the message view gives, as GET /v1/messages/{id} answers.

describe('the 202 body', () => {
  const template = { id: 'tpl_01', name: 'order_update', language: 'pt_BR', category: 'UTILITY' };
  const cases: Omit<NewMessage, 'projectId' | 'to' | 'template'>[] = [
    { variables: { '1': 'Ana', '2': 'A-1001' }, content: { body: 'Olá Ana, pedido A-1001.' } },
    {
      variables: { '2': 'Zoë "Z" \\ ☃ \u2028', '1': '</script>', '10': 'x' },
      headerVariables: { '1': '#1001' },
      content: { header: 'Pedido #1001', body: 'Olá 😀\ttab', footer: 'Acme' },
    },
    { variables: {}, content: { body: 'No variables', footer: 'Acme' } },
  ];
  for (const [index, message] of cases.entries()) {
    it(`is JSON.stringify(messageView(row)), case ${index + 1}`, () => {
      const row = queuedMessageRow({ projectId: 'proj_01', to: '+5511987654321', template, ...message }, 1_795_000_000_123 + index);
      assert.equal(acceptedMessageJson(row), JSON.stringify(messageView(row)));
      assert.deepEqual(JSON.parse(acceptedMessageJson(row)).variables, message.variables);
    });
  }
});
