import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import { signatureOf } from '../../src/providers/whatsapp/webhook.ts';
import type { DatabaseKind } from './databases.ts';
import { FAKE_WABA_ID, type FakeGraphApi, startFakeGraphApi, systemUserToken } from './fakeGraphApi.ts';
import { startTestServer, type TestServer } from './server.ts';
import { until } from './until.ts';

// svc with SVC_PROVIDER=whatsapp against the fake Graph API, and Meta's side of the webhook.

export const APP_SECRET = 'meta-app-secret-for-tests';
export const VERIFY_TOKEN = 'verify-me-please';
export const PHONE_NUMBER_ID = '106540352242922';
export const TOKEN = 'EAAG-first-token';
export const WEBHOOK = '/v1/providers/whatsapp/webhook';
export const CREDENTIALS = '/v1/projects/me/provider-credentials';

export function whatsappEnv(fake: FakeGraphApi): Record<string, string> {
  return {
    SVC_PROVIDER: 'whatsapp',
    SVC_WHATSAPP_GRAPH_URL: fake.url,
    SVC_WHATSAPP_API_VERSION: fake.apiVersion,
    SVC_WHATSAPP_APP_SECRET: APP_SECRET,
    SVC_WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
    // Many short waits: long enough in all to rotate a token, short enough for a test.
    SVC_SEND_RETRY_SCHEDULE: Array.from({ length: 40 }, () => '50ms').join(','),
  };
}

export interface WhatsAppSetup {
  fake: FakeGraphApi;
  server: TestServer;
  close(): Promise<void>;
}

/** The fake (a WABA with one number, a system-user token that reaches it) and svc in front of it. */
export async function startWhatsApp(
  kind: DatabaseKind,
  options: { env?: Record<string, string>; logger?: Logger } = {},
): Promise<WhatsAppSetup> {
  const fake = await startFakeGraphApi();
  fake.addPhoneNumber(FAKE_WABA_ID, PHONE_NUMBER_ID);
  fake.tokens.set(TOKEN, systemUserToken([FAKE_WABA_ID]));
  const server = await startTestServer(kind, {
    env: { ...whatsappEnv(fake), ...options.env },
    ...(options.logger && { logger: options.logger }),
  });
  return {
    fake,
    server,
    async close() {
      await server.close();
      await fake.close();
    },
  };
}

/** A project whose credentials are saved (with its WABA named, as a system-user token needs). */
export async function connectedProject(server: TestServer, token = TOKEN, phoneNumberId = PHONE_NUMBER_ID) {
  const project = await server.createProject();
  const saved = await server.call('PUT', CREDENTIALS, {
    key: project.key,
    body: { providerPhoneNumberId: phoneNumberId, providerAccessToken: token, providerBusinessAccountId: FAKE_WABA_ID },
  });
  assert.equal(saved.status, 200, saved.text);
  return { ...project, saved: saved.body };
}

/** Signs like Meta (X-Hub-Signature-256) and posts to svc's webhook. */
export function postWebhook(server: TestServer, payload: unknown, signature: string | null = 'valid') {
  const raw = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature === 'valid') headers['x-hub-signature-256'] = signatureOf(raw, APP_SECRET);
  else if (signature !== null) headers['x-hub-signature-256'] = signature;
  return server.call('POST', WEBHOOK, { raw, headers });
}

/** A `messages` notification with these statuses, as sent from a phone number of a WABA. */
export function statusWebhook(statuses: unknown[], phoneNumberId = PHONE_NUMBER_ID, waba = FAKE_WABA_ID) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: waba,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              statuses,
            },
          },
        ],
      },
    ],
  };
}

/** A WABA-level notification of one field (message_template_status_update, template_category_update, …). */
export function accountWebhook(field: string, value: Record<string, unknown>, waba = FAKE_WABA_ID, time = Math.floor(Date.now() / 1000)) {
  return { object: 'whatsapp_business_account', entry: [{ id: waba, time, changes: [{ field, value }] }] };
}

export function templateWebhook(providerTemplateId: string, event: string, extra: Record<string, unknown> = {}, waba = FAKE_WABA_ID) {
  return accountWebhook(
    'message_template_status_update',
    {
      event,
      message_template_id: Number(providerTemplateId),
      message_template_name: 'whatever',
      message_template_language: 'en_US',
      reason: 'NONE',
      ...extra,
    },
    waba,
  );
}

export { until };

export async function providerTemplateIdOf(server: TestServer, id: string): Promise<string> {
  const row = await until(`the provider id of ${id}`, async () => {
    const found = await server.app.database.db
      .selectFrom('templates')
      .select('provider_template_id')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return found.provider_template_id ?? undefined;
  });
  return row;
}

/** Time passes: the template's next review check is due now. */
export async function reviewNow(server: TestServer, id: string): Promise<void> {
  await server.app.database.db.updateTable('templates').set({ review_due_at: Date.now() }).where('id', '=', id).execute();
  server.app.notifier.wakeLocal('templates');
}

export async function templateWith(server: TestServer, key: string, id: string, test: (template: any) => boolean): Promise<any> {
  return until(`template ${id}`, async () => {
    const reply = await server.call('GET', `/v1/templates/${id}`, { key });
    return test(reply.body) ? reply.body : undefined;
  });
}
