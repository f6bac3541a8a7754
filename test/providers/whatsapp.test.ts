import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signatureOf } from '../../src/providers/whatsapp/webhook.ts';
import { databaseKinds } from '../support/databases.ts';
import { FAKE_WABA_ID, type FakeGraphApi, graphError, systemUserToken } from '../support/fakeGraphApi.ts';
import { call } from '../support/http.ts';
import type { TestServer } from '../support/server.ts';
import { waitForStatus } from '../support/sending.ts';
import {
  APP_SECRET,
  connectedProject,
  CREDENTIALS,
  PHONE_NUMBER_ID,
  postWebhook as post,
  providerTemplateIdOf as providerIdOf,
  reviewNow as dueNow,
  startWhatsApp,
  statusWebhook,
  templateWebhook as templateHook,
  TOKEN,
  until,
  VERIFY_TOKEN,
  WEBHOOK,
  type WhatsAppSetup,
} from '../support/whatsapp.ts';

const HEADER_TEXT = 'Order {{1}}';
const BODY_TEXT = 'Hello {{1}}, your order {{2}} has shipped today.';

for (const kind of databaseKinds()) {
  describe(`WhatsApp Cloud API provider (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;
    let templateId: string;

    const postWebhook = (payload: unknown, signature: string | null = 'valid') => post(server, payload, signature);
    const providerTemplateIdOf = (id: string) => providerIdOf(server, id);
    const reviewNow = (id: string) => dueNow(server, id);
    const templateWebhook = (providerTemplateId: string, event: string, reason = 'NONE') => templateHook(providerTemplateId, event, { reason });

    async function register(name: string, components: unknown[] = [{ type: 'BODY', text: BODY_TEXT }]) {
      const created = await server.call('POST', '/v1/templates', {
        key,
        body: { name, language: 'en_US', category: 'UTILITY', components },
      });
      assert.equal(created.status, 200, created.text);
      assert.equal(created.body.status, 'PENDING');
      return created.body.id as string;
    }

    async function templateStatus(id: string, status: string) {
      return until(`template ${id} to be ${status}`, async () => {
        const reply = await server.call('GET', `/v1/templates/${id}`, { key });
        return reply.body.status === status ? reply.body : undefined;
      });
    }

    async function send(variables = { '1': 'Ana', '2': 'A-1001' }, to = '+5511987654321') {
      const reply = await server.call('POST', '/v1/messages', {
        key,
        body: { to, template: 'order_update', language: 'en_US', variables, headerVariables: { '1': 'A-1001' } },
      });
      assert.equal(reply.status, 202, reply.text);
      return reply.body.id as string;
    }

    async function statuses(id: string): Promise<string[]> {
      const events = await server.call('GET', `/v1/messages/${id}/events`, { key });
      return events.body.map((event: any) => event.status);
    }

    before(async () => {
      setup = await startWhatsApp(kind);
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
    });
    after(() => setup.close());

    describe('templates', () => {
      it('registers the template with the business account of the phone number, and settles it when Meta approves', async () => {
        templateId = await register('order_update', [
          { type: 'HEADER', format: 'TEXT', text: HEADER_TEXT },
          { type: 'BODY', text: BODY_TEXT },
          { type: 'FOOTER', text: 'Acme Inc.' },
        ]);
        const created = fake.requests.find((request) => request.path === `/${fake.apiVersion}/${FAKE_WABA_ID}/message_templates` && request.method === 'POST');
        assert.ok(created, 'the template is submitted to the WABA');
        assert.equal(created.authorization, `Bearer ${TOKEN}`);
        assert.deepEqual(created.body, {
          name: 'order_update',
          language: 'en_US',
          category: 'UTILITY',
          components: [
            // No examples given: language-neutral numbers, never English words.
            { type: 'HEADER', format: 'TEXT', text: HEADER_TEXT, example: { header_text: ['1111'] } },
            { type: 'BODY', text: BODY_TEXT, example: { body_text: [['1111', '2222']] } },
            { type: 'FOOTER', text: 'Acme Inc.' },
          ],
        });
        const providerTemplateId = await providerTemplateIdOf(templateId);
        assert.equal(fake.templates.get(providerTemplateId)?.status, 'PENDING');

        // Still pending at Meta: the check changes nothing.
        await reviewNow(templateId);
        await until('a status check', () => fake.requests.some((request) => request.path === `/${fake.apiVersion}/${providerTemplateId}`));
        assert.equal((await server.call('GET', `/v1/templates/${templateId}`, { key })).body.status, 'PENDING');

        fake.review(providerTemplateId, 'APPROVED');
        await reviewNow(templateId);
        await templateStatus(templateId, 'APPROVED');
      });

      it('takes Meta’s signed template webhook: approved, and rejected with its reason', async () => {
        const approved = await register('welcome_approved');
        const rejected = await register('welcome_rejected');
        assert.equal((await postWebhook(templateWebhook(await providerTemplateIdOf(approved), 'APPROVED'))).status, 200);
        await templateStatus(approved, 'APPROVED');
        const reply = await postWebhook(templateWebhook(await providerTemplateIdOf(rejected), 'REJECTED', 'INVALID_FORMAT'));
        assert.equal(reply.status, 200);
        const settled = await templateStatus(rejected, 'REJECTED');
        assert.match(settled.rejectionReason, /INVALID_FORMAT/);
        // A template id svc does not know is acknowledged (the review worker polls its own).
        assert.equal((await postWebhook(templateWebhook('999999', 'APPROVED'))).status, 200);
      });

      it('a template Meta refuses outright is REJECTED with Meta’s explanation', async () => {
        const refusal = graphError(400, 100, 'Invalid parameter', 'Template name contains a reserved word.');
        fake.failNext('create_template', refusal, refusal);
        const id = await register('refused_outright');
        const settled = await templateStatus(id, 'REJECTED');
        assert.match(settled.rejectionReason, /reserved word/);
      });
    });

    describe('sending', () => {
      it('sends the template message to Meta and records SENT with the wamid', async () => {
        const before = fake.sends().length;
        const id = await send();
        const sent = await waitForStatus(server, key, id, 'SENT');
        const request = fake.sends()[before]!;
        assert.equal(request.path, `/${fake.apiVersion}/${PHONE_NUMBER_ID}/messages`);
        assert.equal(request.authorization, `Bearer ${TOKEN}`);
        assert.match(request.contentType ?? '', /application\/json/);
        assert.deepEqual(request.body, {
          messaging_product: 'whatsapp',
          recipient_type: 'individual',
          // Full E.164: without its '+', Meta would prepend the business number's country code.
          to: '+5511987654321',
          type: 'template',
          template: {
            name: 'order_update',
            language: { code: 'en_US' },
            components: [
              { type: 'header', parameters: [{ type: 'text', text: 'A-1001' }] },
              {
                type: 'body',
                parameters: [
                  { type: 'text', text: 'Ana' },
                  { type: 'text', text: 'A-1001' },
                ],
              },
            ],
          },
          biz_opaque_callback_data: id,
        });
        assert.match(sent.providerMessageId, /^wamid\./);
        assert.deepEqual(await statuses(id), ['QUEUED', 'SENT']);
      });

      it('signed status webhooks move the message: delivered, then read', async () => {
        const id = await send();
        const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
        const at = Math.floor(Date.now() / 1000);
        const status = (name: string, seconds: number) => ({
          id: providerMessageId,
          status: name,
          timestamp: String(seconds),
          recipient_id: '5511987654321',
          biz_opaque_callback_data: id,
        });
        assert.equal((await postWebhook(statusWebhook([status('delivered', at + 1)]))).status, 200);
        const delivered = await waitForStatus(server, key, id, 'DELIVERED');
        assert.equal(delivered.deliveredAt, new Date((at + 1) * 1000).toISOString());
        // Meta batches; a duplicate changes nothing.
        const reply = await postWebhook(statusWebhook([status('delivered', at + 1), status('read', at + 2)]));
        assert.equal(reply.status, 200);
        const read = await waitForStatus(server, key, id, 'READ');
        assert.equal(read.readAt, new Date((at + 2) * 1000).toISOString());
        // A late delivered after read changes nothing either.
        assert.equal((await postWebhook(statusWebhook([status('delivered', at + 3)]))).status, 200);
        assert.deepEqual(await statuses(id), ['QUEUED', 'SENT', 'DELIVERED', 'READ']);
      });

      it('a failed status carries Meta’s error to the message', async () => {
        // A number of its own: with SVC_AUTO_SUPPRESS=true, 131026 puts it on the suppression list.
        const id = await send(undefined, '+5511987650261');
        const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
        const reply = await postWebhook(
          statusWebhook([
            {
              id: providerMessageId,
              status: 'failed',
              timestamp: String(Math.floor(Date.now() / 1000)),
              recipient_id: '5511987654321',
              biz_opaque_callback_data: id,
              errors: [
                {
                  code: 131026,
                  title: 'Message undeliverable',
                  message: 'Message undeliverable',
                  error_data: { details: 'Message Undeliverable.' },
                },
              ],
            },
          ]),
        );
        assert.equal(reply.status, 200);
        const failed = await waitForStatus(server, key, id, 'FAILED');
        assert.deepEqual(failed.error, { code: '131026', title: 'Message undeliverable', message: 'Message Undeliverable.' });
      });

      it('a status that names no message of svc is acknowledged; one naming an svc message not found yet is not', async () => {
        const foreign = await postWebhook(statusWebhook([{ id: 'wamid.foreign', status: 'delivered', timestamp: '1700000000', recipient_id: '1' }]));
        assert.equal(foreign.status, 200);
        const missing = await postWebhook(
          statusWebhook([
            { id: 'wamid.missing', status: 'delivered', timestamp: '1700000000', recipient_id: '1', biz_opaque_callback_data: 'msg_00000000000000000000000000' },
          ]),
        );
        assert.equal(missing.status, 503, 'Meta sends it again later');
      });

      it('a transient error (131000, HTTP 500) is retried, then the message goes through', async () => {
        fake.failNext('send', graphError(500, 131000, 'Something went wrong', 'Unknown error, please retry later.'));
        const before = fake.sends().length;
        const id = await send();
        await waitForStatus(server, key, id, 'SENT');
        assert.equal(fake.sends().length - before, 2);
        assert.deepEqual(await statuses(id), ['QUEUED', 'SENT']);
      });

      it('throttling (130429 with Retry-After) is retried', async () => {
        fake.failNext('send', { ...graphError(429, 130429, 'Rate limit hit', 'Cloud API message throughput has been reached.'), headers: { 'retry-after': '0' } });
        const id = await send();
        await waitForStatus(server, key, id, 'SENT');
      });

      it('a permanent error (132001) fails the message at once with Meta’s code and trace id', async () => {
        const refusal = graphError(404, 132001, 'Template name does not exist in the translation', 'template name (order_update) does not exist in en_US');
        fake.failNext('send', refusal);
        const before = fake.sends().length;
        const id = await send();
        const failed = await waitForStatus(server, key, id, 'FAILED');
        assert.deepEqual(failed.error, {
          code: '132001',
          title: 'Template name does not exist in the translation',
          message: 'template name (order_update) does not exist in en_US',
          fbtraceId: (refusal.body as any).error.fbtrace_id,
        });
        assert.equal(fake.sends().length - before, 1);
        assert.deepEqual(await statuses(id), ['QUEUED', 'FAILED']);
      });

      it('131026 at submission fails at once too', async () => {
        fake.failNext('send', graphError(400, 131026, 'Message Undeliverable', 'Message Undeliverable.'));
        const id = await send(undefined, '+5511987650262');
        const failed = await waitForStatus(server, key, id, 'FAILED');
        assert.equal(failed.error.code, '131026');
      });

      it('an expired token (190) is retried, and a token rotated in time rescues the message', async () => {
        const ROTATED = 'EAAG-rotated-token';
        const grant = fake.tokens.get(TOKEN)!;
        fake.tokens.delete(TOKEN);
        try {
          const before = fake.sends().length;
          const id = await send();
          await until('a refused submission', () => fake.sends().length - before >= 2);
          assert.equal((await server.call('GET', `/v1/messages/${id}`, { key })).body.status, 'QUEUED');
          fake.tokens.set(ROTATED, systemUserToken([FAKE_WABA_ID]));
          const rotated = await server.call('PUT', CREDENTIALS, {
            key,
            body: { providerPhoneNumberId: PHONE_NUMBER_ID, providerAccessToken: ROTATED },
          });
          assert.equal(rotated.status, 200, rotated.text);
          await waitForStatus(server, key, id, 'SENT');
          assert.equal(fake.sends().at(-1)!.authorization, `Bearer ${ROTATED}`);
        } finally {
          fake.tokens.set(TOKEN, grant);
          await server.call('PUT', CREDENTIALS, {
            key,
            body: { providerPhoneNumberId: PHONE_NUMBER_ID, providerAccessToken: TOKEN },
          });
        }
      });
    });

    describe('webhook security', () => {
      it('refuses unsigned and badly signed posts with 401, and changes nothing', async () => {
        const id = await send();
        const { providerMessageId } = await waitForStatus(server, key, id, 'SENT');
        const payload = statusWebhook([
          { id: providerMessageId, status: 'read', timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: '1', biz_opaque_callback_data: id },
        ]);
        const wrongSecret = signatureOf(JSON.stringify(payload), 'another-secret');
        for (const signature of [null, 'sha256=', 'sha1=abc', wrongSecret, wrongSecret.replace('sha256=', '')]) {
          const reply = await postWebhook(payload, signature);
          assert.equal(reply.status, 401, String(signature));
          assert.equal(reply.body.code, 'unauthorized');
        }
        // Signed for another body.
        const tampered = await server.call('POST', WEBHOOK, {
          raw: JSON.stringify(payload) + ' ',
          headers: { 'content-type': 'application/json', 'x-hub-signature-256': signatureOf(JSON.stringify(payload), APP_SECRET) },
        });
        assert.equal(tampered.status, 401);
        const message = (await server.call('GET', `/v1/messages/${id}`, { key })).body;
        assert.equal(message.status, 'SENT');
        assert.deepEqual(await statuses(id), ['QUEUED', 'SENT']);
      });

      it('answers the verification handshake only with the verify token', async () => {
        const query = (mode: string, token: string) =>
          `${WEBHOOK}?hub.mode=${mode}&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444`;
        const ok = await call(server.url, 'GET', query('subscribe', VERIFY_TOKEN));
        assert.equal(ok.status, 200);
        assert.equal(ok.text, '1158201444');
        assert.match(ok.headers.get('content-type') ?? '', /^text\/plain/);
        assert.equal((await call(server.url, 'GET', query('subscribe', 'wrong'))).status, 403);
        assert.equal((await call(server.url, 'GET', query('unsubscribe', VERIFY_TOKEN))).status, 403);
        assert.equal((await call(server.url, 'GET', WEBHOOK)).status, 403);
      });

      it('has no test helpers', async () => {
        const review = await server.call('POST', `/v1/test-helpers/templates/${templateId}/review`, { key, body: { status: 'APPROVED' } });
        assert.equal(review.status, 404);
        const advance = await server.call('POST', '/v1/test-helpers/messages/msg_00000000000000000000000000/advance', { key, body: { status: 'READ' } });
        assert.equal(advance.status, 404);
      });
    });
  });
}
