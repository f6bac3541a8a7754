import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { FAKE_WABA_ID, type FakeGraphApi, graphError, OTHER_WABA_ID } from '../support/fakeGraphApi.ts';
import type { TestServer } from '../support/server.ts';
import { waitForStatus } from '../support/sending.ts';
import {
  accountWebhook,
  connectedProject,
  postWebhook,
  providerTemplateIdOf,
  reviewNow,
  startWhatsApp,
  templateWebhook,
  templateWith,
  type WhatsAppSetup,
} from '../support/whatsapp.ts';

// Templates as Meta has them: examples, the authentication model, deletion at Meta, Meta's finer
// statuses (paused, flagged, disabled…) with their reasons, and its category changes.

const BODY_TEXT = 'Hello {{1}}, your order {{2}} has shipped today.';
const COPY_CODE = { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE' }] };

for (const kind of databaseKinds()) {
  describe(`WhatsApp templates (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let key: string;
    let names = 0;

    async function register(category: string, components: unknown[], language = 'en_US') {
      const name = `tpl_${++names}`;
      const created = await server.call('POST', '/v1/templates', { key, body: { name, language, category, components } });
      assert.equal(created.status, 200, created.text);
      return { id: created.body.id as string, name, providerId: await providerTemplateIdOf(server, created.body.id) };
    }

    async function approved(category = 'UTILITY', components: unknown[] = [{ type: 'BODY', text: BODY_TEXT }]) {
      const template = await register(category, components);
      fake.review(template.providerId, 'APPROVED');
      assert.equal((await postWebhook(server, templateWebhook(template.providerId, 'APPROVED'))).status, 200);
      await templateWith(server, key, template.id, (body) => body.status === 'APPROVED');
      return template;
    }

    function send(template: string, variables: Record<string, string> = { '1': 'Ana', '2': 'A-1001' }) {
      return server.call('POST', '/v1/messages', { key, body: { to: '+5511987654321', template, language: 'en_US', variables } });
    }

    before(async () => {
      setup = await startWhatsApp(kind);
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
    });
    after(() => setup.close());

    describe('examples', () => {
      it('sends the customer’s own examples, in Meta’s shape, for a template in any language', async () => {
        const components = [
          { type: 'HEADER', format: 'TEXT', text: 'Pedido {{1}}', example: { header_text: ['#1001'] } },
          { type: 'BODY', text: 'Olá {{1}}, seu pedido {{2}} foi enviado.', example: { body_text: [['Ana', '#1001']] } },
        ];
        const created = await server.call('POST', '/v1/templates', {
          key,
          body: { name: 'pedido_enviado', language: 'pt_BR', category: 'UTILITY', components },
        });
        assert.equal(created.status, 200, created.text);
        assert.deepEqual(created.body.components, components, 'returned as submitted');
        const submitted = fake.of('create_template').at(-1)!.body;
        assert.deepEqual(submitted.components[0].example, { header_text: ['#1001'] });
        assert.deepEqual(submitted.components[1].example, { body_text: [['Ana', '#1001']] });
      });

      it('derives language-neutral examples Meta accepts when none are given', async () => {
        const template = await register('MARKETING', [{ type: 'BODY', text: 'Olá {{1}}, use o cupom {{2}} hoje.' }], 'pt_BR');
        assert.equal(fake.templates.get(template.providerId)?.status, 'PENDING', 'Meta took it');
        const submitted = fake.of('create_template').at(-1)!.body;
        assert.deepEqual(submitted.components[0].example, { body_text: [['1111', '2222']] });
      });
    });

    describe('authentication templates', () => {
      it('registers Meta’s authentication model and sends the code in the body and the copy-code button', async () => {
        const template = await approved('AUTHENTICATION', [
          { type: 'BODY', add_security_recommendation: true },
          { type: 'FOOTER', code_expiration_minutes: 10 },
          COPY_CODE,
        ]);
        const submitted = fake.of('create_template').find((request) => request.body.name === template.name)!.body;
        assert.deepEqual(submitted.components, [
          { type: 'BODY', add_security_recommendation: true },
          { type: 'FOOTER', code_expiration_minutes: 10 },
          { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE' }] },
        ]);
        const shown = (await server.call('GET', `/v1/templates/${template.id}`, { key })).body;
        assert.equal(shown.components[0].text, '*{{1}}* is your verification code. For your security, do not share this code.');
        assert.equal(shown.components[1].text, 'This code expires in 10 minutes.');

        const accepted = await send(template.name, { '1': '482913' });
        assert.equal(accepted.status, 202, accepted.text);
        assert.equal(accepted.body.content.body, '*482913* is your verification code. For your security, do not share this code.');
        await waitForStatus(server, key, accepted.body.id, 'SENT');
        const request = fake.sends().at(-1)!;
        assert.deepEqual(request.body.template.components, [
          { type: 'body', parameters: [{ type: 'text', text: '482913' }] },
          { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '482913' }] },
        ]);
      });

      it('registers a one-tap autofill button with its app', async () => {
        const button = {
          type: 'OTP',
          otp_type: 'ONE_TAP',
          text: 'Copy code',
          autofill_text: 'Autofill',
          supported_apps: [{ package_name: 'com.example.luckyshrub', signature_hash: 'K8a/AINcGX7' }],
        };
        const template = await register('AUTHENTICATION', [{ type: 'BODY' }, { type: 'BUTTONS', buttons: [button] }]);
        assert.equal(fake.templates.get(template.providerId)?.category, 'AUTHENTICATION');
        const submitted = fake.of('create_template').at(-1)!.body;
        assert.deepEqual(submitted.components[1], { type: 'BUTTONS', buttons: [button] });
      });

      it('does not add a button to other templates’ sends', async () => {
        const template = await approved();
        const accepted = await send(template.name);
        await waitForStatus(server, key, accepted.body.id, 'SENT');
        assert.ok(!fake.sends().at(-1)!.body.template.components.some((component: any) => component.type === 'button'));
      });
    });

    describe('deletion', () => {
      it('deletes at Meta too, by its id there; the name can then be registered afresh with other text', async () => {
        const template = await register('UTILITY', [{ type: 'BODY', text: BODY_TEXT }]);
        const deleted = await server.call('DELETE', `/v1/templates/${template.id}`, { key });
        assert.equal(deleted.status, 200, deleted.text);
        assert.equal(deleted.body.providerDeletion, 'deleted');
        const request = fake.of('delete_template').at(-1)!;
        assert.equal(request.path, `/${fake.apiVersion}/${FAKE_WABA_ID}/message_templates`);
        assert.equal(request.query.get('hsm_id'), template.providerId);
        assert.equal(request.query.get('name'), template.name);
        assert.equal(fake.templates.has(template.providerId), false);

        const again = await server.call('POST', '/v1/templates', {
          key,
          body: { name: template.name, language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'New words for {{1}} today.' }] },
        });
        assert.equal(again.status, 200);
        const newId = await providerTemplateIdOf(server, again.body.id);
        assert.notEqual(newId, template.providerId);
        assert.equal(fake.templates.get(newId)?.components[0].text, 'New words for {{1}} today.');
      });

      it('never silently adopts Meta’s old text when Meta kept the template', async () => {
        const template = await approved();
        fake.review(template.providerId, 'DISABLED');
        const deleted = await server.call('DELETE', `/v1/templates/${template.id}`, { key });
        assert.equal(deleted.status, 200, deleted.text);
        assert.equal(deleted.body.providerDeletion, 'refused');
        assert.equal(deleted.body.providerError.code, '100');
        assert.match(deleted.body.providerError.message, /disabled status cannot be deleted/);
        assert.ok(fake.templates.has(template.providerId), 'Meta keeps it');

        const again = await server.call('POST', '/v1/templates', {
          key,
          body: { name: template.name, language: 'en_US', category: 'UTILITY', components: [{ type: 'BODY', text: 'Different text for {{1}} now.' }] },
        });
        assert.equal(again.status, 200);
        const settled = await templateWith(server, key, again.body.id, (body) => body.status !== 'PENDING');
        assert.equal(settled.status, 'REJECTED');
        assert.match(settled.rejectionReason, /already has a template .* with other content/);
      });

      it('deletes nothing when Meta cannot be reached (503), and only its own project’s templates', async () => {
        const template = await register('UTILITY', [{ type: 'BODY', text: BODY_TEXT }]);
        fake.failNext('delete_template', graphError(503, 2, 'Service temporarily unavailable', 'Later.'));
        const down = await server.call('DELETE', `/v1/templates/${template.id}`, { key });
        assert.equal(down.status, 503, down.text);
        assert.equal(down.body.code, 'unavailable');
        assert.equal((await server.call('GET', `/v1/templates/${template.id}`, { key })).status, 200);

        const other = await server.createProject();
        const before = fake.of('delete_template').length;
        assert.equal((await server.call('DELETE', `/v1/templates/${template.id}`, { key: other.key })).status, 404);
        assert.equal(fake.of('delete_template').length, before, 'Meta was not asked');
        assert.ok(fake.templates.has(template.providerId));
      });

      it('finds a template Meta no longer has by its id, without relying on error_subcode', async () => {
        const template = await register('UTILITY', [{ type: 'BODY', text: BODY_TEXT }]);
        fake.templates.delete(template.providerId);
        await reviewNow(server, template.id);
        const settled = await templateWith(server, key, template.id, (body) => body.status !== 'PENDING');
        assert.equal(settled.status, 'REJECTED');
        assert.equal(settled.providerStatus, 'DELETED');
        assert.match(settled.rejectionReason, /no longer exists/);
      });
    });

    describe('Meta’s statuses', () => {
      it('a PAUSED template cannot send (422 with the reason) until Meta unpauses it; FLAGGED still sends', async () => {
        const template = await approved();
        const paused = templateWebhook(template.providerId, 'PAUSED', { other_info: { title: 'FIRST_PAUSE', description: 'Paused for 3 hours for low quality.' } });
        assert.equal((await postWebhook(server, paused)).status, 200);
        const shown = await templateWith(server, key, template.id, (body) => body.providerStatus === 'PAUSED');
        assert.equal(shown.status, 'APPROVED', 'the review outcome stands');
        assert.match(shown.providerStatusReason, /FIRST_PAUSE/);
        const refused = await send(template.name);
        assert.equal(refused.status, 422);
        assert.equal(refused.body.code, 'template_not_approved');
        assert.match(refused.body.detail, /PAUSED at the provider .*FIRST_PAUSE/);

        // An older report arriving late changes nothing.
        const late = templateWebhook(template.providerId, 'APPROVED');
        late.entry[0]!.time -= 3600;
        await postWebhook(server, late);
        assert.equal((await send(template.name)).status, 422);

        await postWebhook(server, templateWebhook(template.providerId, 'REINSTATED'));
        await templateWith(server, key, template.id, (body) => body.providerStatus === 'APPROVED');
        assert.equal((await send(template.name)).status, 202);

        await postWebhook(server, templateWebhook(template.providerId, 'FLAGGED'));
        await templateWith(server, key, template.id, (body) => body.providerStatus === 'FLAGGED');
        assert.equal((await send(template.name)).status, 202);
      });

      it('a DISABLED template cannot send, and says when and why', async () => {
        const template = await approved();
        const disabled = templateWebhook(template.providerId, 'DISABLED', { disable_info: { disable_date: Math.floor(Date.now() / 1000) } });
        await postWebhook(server, disabled);
        const shown = await templateWith(server, key, template.id, (body) => body.providerStatus === 'DISABLED');
        assert.match(shown.providerStatusReason, /DISABLED at WhatsApp.*Disabled on \d{4}-\d\d-\d\d/);
        const refused = await send(template.name);
        assert.equal(refused.status, 422);
        assert.match(refused.body.detail, /DISABLED/);
      });

      it('keeps the details of a rejection', async () => {
        const template = await register('UTILITY', [{ type: 'BODY', text: BODY_TEXT }]);
        const rejected = templateWebhook(template.providerId, 'REJECTED', {
          reason: 'INVALID_FORMAT',
          rejection_info: {
            reason: 'Your template has parameters placed next to each other.',
            recommendation: 'Separate parameters with descriptive text.',
          },
        });
        await postWebhook(server, rejected);
        const shown = await templateWith(server, key, template.id, (body) => body.status === 'REJECTED');
        assert.equal(shown.providerStatus, 'REJECTED');
        assert.equal(
          shown.rejectionReason,
          'Rejected by WhatsApp: INVALID_FORMAT. Your template has parameters placed next to each other. Separate parameters with descriptive text.',
        );
      });

      it('ignores a report about its template id from another business account', async () => {
        const template = await register('UTILITY', [{ type: 'BODY', text: BODY_TEXT }]);
        // Reports are applied before the webhook is answered.
        assert.equal((await postWebhook(server, templateWebhook(template.providerId, 'APPROVED', {}, OTHER_WABA_ID))).status, 200);
        assert.equal((await server.call('GET', `/v1/templates/${template.id}`, { key })).body.status, 'PENDING');
      });
    });

    describe('category changes', () => {
      it('records a change Meta announces, then makes, in the template’s history; sends follow the new category', async () => {
        const template = await approved();
        const announced = accountWebhook('template_category_update', {
          message_template_id: Number(template.providerId),
          message_template_name: template.name,
          message_template_language: 'en-US',
          new_category: 'UTILITY',
          correct_category: 'MARKETING',
          category_update_timestamp: Math.floor(Date.now() / 1000) + 86_400,
        });
        assert.equal((await postWebhook(server, announced)).status, 200);
        const pending = await templateWith(server, key, template.id, (body) => body.upcomingCategory !== undefined);
        assert.equal(pending.category, 'UTILITY');
        assert.equal(pending.upcomingCategory.category, 'MARKETING');

        const made = accountWebhook('template_category_update', {
          message_template_id: Number(template.providerId),
          previous_category: 'UTILITY',
          new_category: 'MARKETING',
        });
        assert.equal((await postWebhook(server, made)).status, 200);
        assert.equal((await postWebhook(server, made)).status, 200, 'a repeat changes nothing');
        const changed = await templateWith(server, key, template.id, (body) => body.category === 'MARKETING');
        assert.equal(changed.categoryHistory.length, 1);
        assert.deepEqual({ ...changed.categoryHistory[0], at: undefined }, { from: 'UTILITY', to: 'MARKETING', at: undefined });
        assert.ok(!('upcomingCategory' in changed));
        const accepted = await send(template.name);
        assert.equal(accepted.status, 202);
        const row = await server.app.database.db.selectFrom('messages').select('category').where('id', '=', accepted.body.id).executeTakeFirstOrThrow();
        assert.equal(row.category, 'MARKETING');
      });
    });
  });
}
