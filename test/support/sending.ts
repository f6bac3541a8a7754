import assert from 'node:assert/strict';
import { call } from './http.ts';
import type { TestServer } from './server.ts';

export interface Sender {
  projectId: string;
  key: string;
  templateName: string;
  language: string;
}

export const BODY_TEXT = 'Hello {{1}}, your order {{2}} has shipped today.';

/**
 * A project ready to send, on the service at `baseUrl` (in this process or another): credentials
 * saved and a template approved through the sandbox test helper.
 */
export async function senderAt(
  baseUrl: string,
  options: { templateName?: string; language?: string; bodyText?: string; phoneNumberId?: string } = {},
): Promise<Sender & { templateId: string }> {
  const { templateName = 'order_update', language = 'en_US', bodyText = BODY_TEXT, phoneNumberId = '1065550001' } = options;
  const project = await call(baseUrl, 'POST', '/v1/projects', { body: { name: 'Acme', ownerEmail: 'owner@example.com' } });
  assert.equal(project.status, 200, project.text);
  const key: string = project.body.apiKey;
  const credentials = await call(baseUrl, 'PUT', '/v1/projects/me/provider-credentials', {
    key,
    body: { providerPhoneNumberId: phoneNumberId, providerAccessToken: 'EAAG-test-token' },
  });
  assert.equal(credentials.status, 200, credentials.text);
  const templateId = await approvedTemplateAt(baseUrl, key, templateName, language, [{ type: 'BODY', text: bodyText }]);
  return { projectId: project.body.projectId, key, templateName, language, templateId };
}

/** A project ready to send: credentials saved and an approved two-variable template. */
export async function createSender(server: TestServer, templateName = 'order_update', language = 'en_US'): Promise<Sender> {
  return senderAt(server.url, { templateName, language });
}

export async function approvedTemplate(
  server: TestServer,
  key: string,
  name: string,
  language: string,
  components: unknown[] = [{ type: 'BODY', text: BODY_TEXT }],
): Promise<string> {
  return approvedTemplateAt(server.url, key, name, language, components);
}

async function approvedTemplateAt(
  baseUrl: string,
  key: string,
  name: string,
  language: string,
  components: unknown[],
): Promise<string> {
  const created = await call(baseUrl, 'POST', '/v1/templates', {
    key,
    body: { name, language, category: 'UTILITY', components },
  });
  assert.equal(created.status, 200, created.text);
  const reviewed = await call(baseUrl, 'POST', `/v1/test-helpers/templates/${created.body.id}/review`, {
    key,
    body: { status: 'APPROVED' },
  });
  assert.equal(reviewed.status, 200, reviewed.text);
  return created.body.id;
}

/** Polls until the message reaches `status` (or fails the test after `timeoutMs`). */
export async function waitForStatus(
  server: TestServer,
  key: string,
  id: string,
  status: string,
  timeoutMs = 15_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    last = await server.call('GET', `/v1/messages/${id}`, { key });
    if (last.body.status === status) return last.body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`message ${id} did not reach ${status}; last: ${JSON.stringify(last?.body)}`);
}

export function sendBody(sender: Sender, to = '+5511987654321', variables: Record<string, string> = { '1': 'Ana', '2': 'A-1001' }) {
  return { to, template: sender.templateName, language: sender.language, variables };
}
