import { DEFAULT_GRAPH_VERSION } from '../../src/providers/whatsapp/graphVersions.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKinds } from '../support/databases.ts';
import { FAKE_APP_ID, FAKE_WABA_ID, type FakeGraphApi } from '../support/fakeGraphApi.ts';
import { PNG, startSampleServer, type SampleServer } from '../support/sampleServer.ts';
import type { TestServer } from '../support/server.ts';
import { waitForStatus } from '../support/sending.ts';
import {
  connectedProject,
  PHONE_NUMBER_ID,
  providerTemplateIdOf,
  reviewNow,
  startWhatsApp,
  TOKEN,
  until,
  type WhatsAppSetup,
} from '../support/whatsapp.ts';

// CONTRACT §9 with SVC_PROVIDER=whatsapp, against the fake Graph API: templates created in Meta's
// exact shapes (media samples uploaded with the Resumable Upload API), and rich template messages
// sent in Meta's exact shapes.

const BODY = { type: 'BODY', text: 'Hello {{1}}, your order {{2}} has shipped.' };
const BUTTONS = {
  type: 'BUTTONS',
  buttons: [
    { type: 'QUICK_REPLY', text: 'Yes, confirm' },
    { type: 'QUICK_REPLY', text: 'Stop promotions' },
    { type: 'URL', text: 'Track order', url: 'https://shop.example.com/track/{{1}}', example: ['A-1001'] },
    { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+15550051310' },
    { type: 'COPY_CODE', example: 'SAVE20' },
  ],
};

for (const kind of databaseKinds()) {
  describe(`WhatsApp rich templates (${kind})`, () => {
    let setup: WhatsAppSetup;
    let fake: FakeGraphApi;
    let server: TestServer;
    let samples: SampleServer;
    let key: string;

    before(async () => {
      setup = await startWhatsApp(kind, { env: { SVC_WHATSAPP_APP_ID: FAKE_APP_ID } });
      ({ fake, server } = setup);
      ({ key } = await connectedProject(server));
      samples = await startSampleServer();
    });
    after(async () => {
      await setup.close();
      await samples.close();
    });

    async function register(body: Record<string, unknown>) {
      const created = await server.call('POST', '/v1/templates', { key, body: { language: 'en_US', category: 'MARKETING', ...body } });
      assert.equal(created.status, 200, created.text);
      return created.body;
    }

    function createdAtMeta(name: string) {
      const request = fake.of('create_template').find((candidate) => candidate.body?.name === name);
      assert.ok(request, `${name} was submitted to Meta`);
      return request.body;
    }

    async function approve(templateId: string) {
      const providerTemplateId = await providerTemplateIdOf(server, templateId);
      fake.review(providerTemplateId, 'APPROVED');
      await reviewNow(server, templateId);
      await until(`template ${templateId} approved`, async () => {
        const reply = await server.call('GET', `/v1/templates/${templateId}`, { key });
        return reply.body.status === 'APPROVED' ? reply.body : undefined;
      });
    }

    async function sentPayload(body: Record<string, unknown>) {
      const reply = await server.call('POST', '/v1/messages', { key, body: { to: '+5511987654321', language: 'en_US', ...body } });
      assert.equal(reply.status, 202, reply.text);
      await waitForStatus(server, key, reply.body.id, 'SENT');
      const request = fake.sends().find((candidate) => candidate.body?.biz_opaque_callback_data === reply.body.id);
      assert.ok(request, 'sent to Meta');
      assert.equal(request.path, `/${DEFAULT_GRAPH_VERSION}/${PHONE_NUMBER_ID}/messages`);
      return request.body.template;
    }

    describe('registering', () => {
      it('creates a media header (handle passed through) with every button type, in Meta’s shapes', async () => {
        const header = { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['4::aW1hZ2UvanBlZw==:ARbC'] } };
        const created = await register({ name: 'promo_image', components: [header, BODY, { type: 'FOOTER', text: 'Acme' }, BUTTONS] });
        assert.deepEqual(createdAtMeta('promo_image'), {
          name: 'promo_image',
          language: 'en_US',
          category: 'MARKETING',
          components: [
            { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['4::aW1hZ2UvanBlZw==:ARbC'] } },
            { type: 'BODY', text: BODY.text, example: { body_text: [['1111', '2222']] } },
            { type: 'FOOTER', text: 'Acme' },
            BUTTONS,
          ],
        });
        assert.equal(fake.of('upload_session').length, 0, 'a handle needs no upload');
        await approve(created.id);
      });

      it('downloads a header_url sample and uploads it with the Resumable Upload API, then creates the template with its handle', async () => {
        const url = `${samples.url}/photo.png`;
        const components = [{ type: 'HEADER', format: 'IMAGE', example: { header_url: [url] } }, BODY];
        const created = await register({ name: 'promo_uploaded', components });
        assert.deepEqual(created.components, components, 'stored as given');
        const [session] = fake.of('upload_session');
        assert.ok(session);
        assert.equal(session.method, 'POST');
        assert.equal(session.path, `/${DEFAULT_GRAPH_VERSION}/${FAKE_APP_ID}/uploads`);
        assert.equal(session.query.get('file_length'), String(PNG.length));
        assert.equal(session.query.get('file_type'), 'image/png');
        assert.equal(session.authorization, `Bearer ${TOKEN}`);
        const [upload] = fake.of('upload');
        assert.ok(upload);
        assert.match(upload.path, new RegExp(`^/${DEFAULT_GRAPH_VERSION}/upload:`));
        assert.ok(upload.query.get('sig'), 'the upload id is used as Meta gives it, signature included');
        assert.equal(upload.authorization, `OAuth ${TOKEN}`);
        assert.equal(upload.headers.file_offset, '0');
        assert.deepEqual(upload.bytes, PNG);
        const handle = [...fake.uploads.values()][0]!.handle;
        assert.ok(handle);
        assert.deepEqual(createdAtMeta(created.name).components[0], { type: 'HEADER', format: 'IMAGE', example: { header_handle: [handle] } });
      });

      it('a sample that cannot be fetched is 400 and nothing reaches Meta', async () => {
        const before = fake.requests.length;
        const reply = await server.call('POST', '/v1/templates', {
          key,
          body: { name: 'bad_sample', language: 'en_US', category: 'MARKETING', components: [{ type: 'HEADER', format: 'VIDEO', example: { header_url: [`${samples.url}/photo.png`] } }, BODY] },
        });
        assert.equal(reply.status, 400, reply.text);
        assert.deepEqual(reply.body.errors.map((error: any) => error.field), ['/components/0/example/header_url/0']);
        assert.equal(fake.requests.length, before);
      });

      it('creates NAMED templates with parameter_format and named examples (given, or neutral)', async () => {
        const body = { type: 'BODY', text: 'Hi {{first_name}}, order {{order_id}} ships soon.' };
        await register({ name: 'named_neutral', parameter_format: 'NAMED', category: 'UTILITY', components: [{ type: 'HEADER', format: 'TEXT', text: 'Order {{order_id}}' }, body] });
        assert.deepEqual(createdAtMeta('named_neutral'), {
          name: 'named_neutral',
          language: 'en_US',
          category: 'UTILITY',
          parameter_format: 'NAMED',
          components: [
            { type: 'HEADER', format: 'TEXT', text: 'Order {{order_id}}', example: { header_text_named_params: [{ param_name: 'order_id', example: '1111' }] } },
            {
              type: 'BODY',
              text: body.text,
              example: { body_text_named_params: [{ param_name: 'first_name', example: '1111' }, { param_name: 'order_id', example: '2222' }] },
            },
          ],
        });
        const given = [{ param_name: 'order_id', example: 'A-1' }, { param_name: 'first_name', example: 'Ana' }];
        await register({ name: 'named_given', parameter_format: 'NAMED', components: [{ ...body, example: { body_text_named_params: given } }] });
        assert.deepEqual(createdAtMeta('named_given').components, [{ type: 'BODY', text: body.text, example: { body_text_named_params: given } }]);
      });

      it('creates a LOCATION header without a sample', async () => {
        await register({ name: 'store_location', components: [{ type: 'HEADER', format: 'LOCATION' }, BODY] });
        assert.deepEqual(createdAtMeta('store_location').components[0], { type: 'HEADER', format: 'LOCATION' });
      });
    });

    describe('sending', () => {
      it('sends the image header, named buttons by index and a default quick-reply payload, in Meta’s shapes', async () => {
        const template = await sentPayload({
          template: 'promo_image',
          variables: { '1': 'Ana', '2': 'A-1001' },
          headerMedia: { link: 'https://cdn.example.com/promo.jpg' },
          buttons: { '1': { payload: 'STOP' }, '2': { text: 'A-1001' }, '4': { couponCode: 'SAVE20' } },
        });
        assert.deepEqual(template, {
          name: 'promo_image',
          language: { code: 'en_US' },
          components: [
            { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/promo.jpg' } }] },
            { type: 'body', parameters: [{ type: 'text', text: 'Ana' }, { type: 'text', text: 'A-1001' }] },
            { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'Yes, confirm' }] },
            { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'STOP' }] },
            { type: 'button', sub_type: 'url', index: '2', parameters: [{ type: 'text', text: 'A-1001' }] },
            { type: 'button', sub_type: 'copy_code', index: '4', parameters: [{ type: 'coupon_code', coupon_code: 'SAVE20' }] },
          ],
        });
      });

      it('sends a DOCUMENT with its filename, a LOCATION, and NAMED parameters with parameter_name', async () => {
        const document = await register({ name: 'invoice_ready', category: 'UTILITY', components: [{ type: 'HEADER', format: 'DOCUMENT', example: { header_handle: ['4::cGRm'] } }, BODY] });
        await approve(document.id);
        assert.deepEqual(
          (await sentPayload({ template: 'invoice_ready', variables: { '1': 'Ana', '2': 'A-1' }, headerMedia: { link: 'https://cdn.example.com/i.pdf', filename: 'invoice.pdf' } })).components[0],
          { type: 'header', parameters: [{ type: 'document', document: { link: 'https://cdn.example.com/i.pdf', filename: 'invoice.pdf' } }] },
        );

        await approve((await server.call('GET', '/v1/templates?limit=200', { key })).body.find((found: any) => found.name === 'store_location').id);
        const place = { latitude: 37.483307, longitude: -122.148981, name: 'Acme HQ', address: '1 Hacker Way, Menlo Park' };
        assert.deepEqual((await sentPayload({ template: 'store_location', variables: { '1': 'Ana', '2': 'A-1' }, headerLocation: place })).components[0], {
          type: 'header',
          parameters: [{ type: 'location', location: place }],
        });

        await approve((await server.call('GET', '/v1/templates?limit=200', { key })).body.find((found: any) => found.name === 'named_neutral').id);
        const named = await sentPayload({ template: 'named_neutral', variables: { first_name: 'Ana', order_id: 'A-7' }, headerVariables: { order_id: 'A-7' } });
        assert.deepEqual(named.components, [
          { type: 'header', parameters: [{ type: 'text', parameter_name: 'order_id', text: 'A-7' }] },
          {
            type: 'body',
            parameters: [
              { type: 'text', parameter_name: 'first_name', text: 'Ana' },
              { type: 'text', parameter_name: 'order_id', text: 'A-7' },
            ],
          },
        ]);
      });

      it('a batch with media and buttons sends each item’s own values', async () => {
        const reply = await server.call('POST', '/v1/messages/batch', {
          key,
          body: {
            template: 'promo_image',
            language: 'en_US',
            items: [1, 2].map((n) => ({
              to: `+551198765432${n}`,
              variables: { '1': `Ana ${n}`, '2': `A-${n}` },
              headerMedia: { link: `https://cdn.example.com/${n}.jpg` },
              buttons: { '2': { text: `A-${n}` }, '4': { couponCode: `CODE${n}` } },
            })),
          },
        });
        assert.equal(reply.status, 202, reply.text);
        assert.equal(reply.body.acceptedCount, 2);
        for (const [index, result] of reply.body.items.entries()) {
          const n = index + 1;
          await waitForStatus(server, key, result.message.id, 'SENT');
          const sent = fake.sends().find((candidate) => candidate.body?.biz_opaque_callback_data === result.message.id)!;
          assert.deepEqual(sent.body.template.components, [
            { type: 'header', parameters: [{ type: 'image', image: { link: `https://cdn.example.com/${n}.jpg` } }] },
            { type: 'body', parameters: [{ type: 'text', text: `Ana ${n}` }, { type: 'text', text: `A-${n}` }] },
            { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'Yes, confirm' }] },
            { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'Stop promotions' }] },
            { type: 'button', sub_type: 'url', index: '2', parameters: [{ type: 'text', text: `A-${n}` }] },
            { type: 'button', sub_type: 'copy_code', index: '4', parameters: [{ type: 'coupon_code', coupon_code: `CODE${n}` }] },
          ]);
        }
      });
    });

    it('without SVC_WHATSAPP_APP_ID a sample URL cannot be uploaded: 400 naming it, and a handle still works', async () => {
      const bare = await startWhatsApp(kind);
      try {
        const { key: bareKey } = await connectedProject(bare.server);
        const body = (example: object) => ({
          name: 'no_app_id',
          language: 'en_US',
          category: 'MARKETING',
          components: [{ type: 'HEADER', format: 'IMAGE', example }, BODY],
        });
        const refused = await bare.server.call('POST', '/v1/templates', { key: bareKey, body: body({ header_url: [`${samples.url}/photo.png`] }) });
        assert.equal(refused.status, 400, refused.text);
        assert.deepEqual(refused.body.errors.map((error: any) => [error.field, error.code]), [['/components/0/example/header_url', 'sample_upload_unavailable']]);
        assert.equal(bare.fake.of('create_template').length, 0);
        const taken = await bare.server.call('POST', '/v1/templates', { key: bareKey, body: body({ header_handle: ['4::aGFuZGxl'] }) });
        assert.equal(taken.status, 200, taken.text);
      } finally {
        await bare.close();
      }
    });

    it('the business account the templates went to is the project’s', () => {
      assert.ok(fake.of('create_template').every((request) => request.path === `/${DEFAULT_GRAPH_VERSION}/${FAKE_WABA_ID}/message_templates`));
    });
  });
}
