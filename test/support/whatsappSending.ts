import assert from 'node:assert/strict';
import type { FakeGraphApi } from './fakeGraphApi.ts';
import type { TestServer } from './server.ts';
import { postWebhook, providerTemplateIdOf, templateWebhook, templateWith } from './whatsapp.ts';

// Sending through svc's WhatsApp provider in a test: a template Meta has approved, and a send.

export const BODY = 'Hello {{1}}, your order {{2}} has shipped today.';

/** Registers a template, has the fake approve it and Meta's webhook say so; its svc id. */
export async function approvedWhatsAppTemplate(
  server: TestServer,
  fake: FakeGraphApi,
  key: string,
  name: string,
  category = 'UTILITY',
): Promise<string> {
  const created = await server.call('POST', '/v1/templates', {
    key,
    body: { name, language: 'en_US', category, components: [{ type: 'BODY', text: BODY }] },
  });
  assert.equal(created.status, 200, created.text);
  const providerTemplateId = await providerTemplateIdOf(server, created.body.id);
  fake.review(providerTemplateId, 'APPROVED');
  assert.equal((await postWebhook(server, templateWebhook(providerTemplateId, 'APPROVED'))).status, 200);
  await templateWith(server, key, created.body.id, (template) => template.status === 'APPROVED');
  return created.body.id;
}

export async function sendTemplate(server: TestServer, key: string, template: string, to = '+5511987654321'): Promise<string> {
  const reply = await server.call('POST', '/v1/messages', {
    key,
    body: { to, template, language: 'en_US', variables: { '1': 'Ana', '2': 'A-1001' } },
  });
  assert.equal(reply.status, 202, reply.text);
  return reply.body.id as string;
}

export async function messageRow(server: TestServer, id: string) {
  return server.app.database.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** One status of Meta's `messages` webhook (statuses[]), for a message svc sent. */
export function metaStatus(wamid: string, status: string, messageId: string, extra: Record<string, unknown> = {}) {
  return {
    id: wamid,
    status,
    timestamp: String(Math.floor(Date.now() / 1000)),
    recipient_id: '5511987654321',
    biz_opaque_callback_data: messageId,
    ...extra,
  };
}

/** Meta's `pricing` of a status (webhooks reference: status messages). */
export function metaPricing(category: string, type = 'regular', billable = type === 'regular') {
  return { billable, pricing_model: 'PMP', category, type };
}
