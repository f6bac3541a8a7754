import assert from 'node:assert/strict';
import type { TestServer } from './server.ts';

export interface Sender {
  projectId: string;
  key: string;
  templateName: string;
  language: string;
}

export const BODY_TEXT = 'Hello {{1}}, your order {{2}} has shipped today.';

/** A project ready to send: credentials saved and an approved two-variable template. */
export async function createSender(server: TestServer, templateName = 'order_update', language = 'en_US'): Promise<Sender> {
  const { projectId, key } = await server.createProject();
  const credentials = await server.call('PUT', '/v1/projects/me/provider-credentials', {
    key,
    body: { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-test-token' },
  });
  assert.equal(credentials.status, 200, credentials.text);
  await approvedTemplate(server, key, templateName, language);
  return { projectId, key, templateName, language };
}

export async function approvedTemplate(
  server: TestServer,
  key: string,
  name: string,
  language: string,
  components: unknown[] = [{ type: 'BODY', text: BODY_TEXT }],
): Promise<string> {
  const created = await server.call('POST', '/v1/templates', {
    key,
    body: { name, language, category: 'UTILITY', components },
  });
  assert.equal(created.status, 200, created.text);
  const reviewed = await server.call('POST', `/v1/test-helpers/templates/${created.body.id}/review`, {
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
