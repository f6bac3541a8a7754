import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { FAKE_WABA_ID, type FakeGraphApi } from '../support/fakeGraphApi.ts';
import { startSampleServer } from '../support/sampleServer.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { connectedProject, postWebhook, providerTemplateIdOf, startWhatsApp, templateWebhook, templateWith, type WhatsAppSetup } from '../support/whatsapp.ts';

// Rich templates in the console (CONTRACT §9, issue 21) in Debian's Chromium: an IMAGE header
// and a URL button with a trailing {{1}} registered through the template form (its live preview
// checked on the way), approved, and sent from the send form; then what svc stored and what
// reached the provider are read back: with the sandbox through the API, and with the WhatsApp
// provider as the Graph API payload the (fake) Graph API received. The recipient's reply shows on
// the message's timeline. Screenshots (1280 and 360 px wide) go to artifacts/screenshots/.

const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRED = process.env.SVC_TEST_BROWSER === 'required';
const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));
const WAIT_MS = 20_000;

const missing = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set SVC_TEST_CHROMIUM)`;
if (missing && REQUIRED) throw new Error(`browser tests are required here, but there is ${missing}`);

const HANDLE = '4::aW1hZ2UvanBlZw==:ARb-sample';
const BODY = 'Hello {{1}}, your order {{2}} is ready.';
const IMAGE_LINK = 'https://cdn.example.com/products/sneaker-1001.jpg';

describe('rich templates in the console (Chromium)', { skip: missing }, () => {
  let browser: Browser;
  const pageErrors: string[] = [];

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  after(async () => {
    await browser?.close();
  });

  async function signedIn(server: TestServer, key: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${server.url}/console`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
    return page;
  }

  const noSideways = async (page: Page, width: number) => {
    const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
    // The elements reaching past the screen's edge, to say what overflows.
    const wide = await page.evaluate(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > ${width} + 1).slice(0, 5).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')`);
    assert.ok(scrollWidth <= width, `the page is ${scrollWidth} px wide at ${width} px: ${wide}`);
  };

  /** Fills the template form: IMAGE header (a handle as sample), body with examples, a URL and a quick-reply button. */
  async function fillTemplate(page: Page, name: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Templates', exact: true }).click();
    const form = page.locator('form.template-form');
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Category').selectOption('MARKETING');
    await form.getByLabel('Header type').selectOption('IMAGE');
    await form.getByLabel('Header sample from').selectOption('handle');
    await form.getByLabel('Header sample', { exact: true }).fill(HANDLE);
    // Issue 22: an example is asked only for the placeholders the body has.
    await form.getByLabel('Body', { exact: true }).fill('Hello {{1}}');
    assert.equal(await form.getByLabel(/^Body \{\{\d\}\} example$/).count(), 1, 'one example for {{1}}, none for a {{2}} not in the text');
    await form.getByLabel('Body', { exact: true }).fill('Hello {{1}}, your order {{3}}');
    assert.deepEqual(
      await form.locator('input[data-group="body"]').evaluateAll((inputs: { dataset: Record<string, string | undefined> }[]) => inputs.map((input) => input.dataset.key)),
      ['1', '3'],
      'examples for {{1}} and {{3}} only',
    );
    await form.getByLabel('Body', { exact: true }).fill(BODY);
    await form.getByLabel('Body {{1}} example').fill('Ana');
    await form.getByLabel('Body {{2}} example').fill('A-1001');
    await form.getByLabel('Footer (optional)').fill('Acme Shoes');
    await form.getByLabel('Button type').selectOption('URL');
    await form.getByRole('button', { name: 'Add button' }).click();
    await form.getByLabel('Button 1 text').fill('Track order');
    await form.getByLabel('Button 1 URL', { exact: true }).fill('https://shop.example.com/track/{{1}}');
    await form.getByLabel('Button 1 URL example').fill('A-1001');
    await form.getByLabel('Button type').selectOption('QUICK_REPLY');
    await form.getByRole('button', { name: 'Add button' }).click();
    await form.getByLabel('Button 2 text').fill('Stop promotions');

    const preview = form.locator('.builder-preview .bubble');
    await preview.locator('.bubble-media[data-format="IMAGE"]').waitFor();
    assert.equal(await preview.locator('.bubble-body').textContent(), 'Hello Ana, your order A-1001 is ready.');
    assert.equal(await preview.locator('.bubble-footer').textContent(), 'Acme Shoes');
    assert.equal(await preview.locator('li[data-button="URL"] .button-text').textContent(), 'Track order');
    assert.equal(await preview.locator('li[data-button="URL"] .button-detail').textContent(), 'https://shop.example.com/track/A-1001');
    assert.equal(await preview.locator('li[data-button="QUICK_REPLY"] .button-text').textContent(), 'Stop promotions');
  }

  const EXPECTED_COMPONENTS = [
    { type: 'HEADER', format: 'IMAGE', example: { header_handle: [HANDLE] } },
    { type: 'BODY', text: BODY, example: { body_text: [['Ana', 'A-1001']] } },
    { type: 'FOOTER', text: 'Acme Shoes' },
    {
      type: 'BUTTONS',
      buttons: [
        { type: 'URL', text: 'Track order', url: 'https://shop.example.com/track/{{1}}', example: ['A-1001'] },
        { type: 'QUICK_REPLY', text: 'Stop promotions' },
      ],
    },
  ];

  /** Sends the approved template from the messages page; the new message's id. */
  async function sendFromConsole(page: Page, name: string): Promise<string> {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Messages', exact: true }).click();
    await page.locator('details.send > summary').click();
    const form = page.locator('details.send form');
    await form.getByLabel('Template').selectOption({ label: `${name} (en_US)` });
    await form.getByLabel('To', { exact: true }).fill('+5511987654321');
    await form.getByLabel('Header image link').fill(IMAGE_LINK);
    await form.getByLabel('Body {{1}}').fill('Bia');
    await form.getByLabel('Body {{2}}').fill('A-2002');
    await form.getByLabel('Button 1 “Track order” URL suffix').fill('A-2002');
    await form.getByLabel('Button 2 “Stop promotions” payload (optional)').fill('STOP_PROMOS');
    const preview = form.locator('.builder-preview .bubble');
    assert.equal(await preview.locator('.bubble-media[data-format="IMAGE"] .media-link').textContent(), IMAGE_LINK);
    assert.equal(await preview.locator('.bubble-body').textContent(), 'Hello Bia, your order A-2002 is ready.');
    assert.equal(await preview.locator('li[data-button="URL"] .button-detail').textContent(), 'https://shop.example.com/track/A-2002');
    await form.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForURL(/\/console\/messages\/msg_/);
    return page.url().split('/').pop()!;
  }

  it('with the sandbox: registers, gets approved, sends, and shows the recipient’s reply', async () => {
    const server = await startTestServer('sqlite', {
      env: { SVC_SANDBOX_REVIEW_DELAY_MS: '300', SVC_SANDBOX_DELIVERY_DELAY_MS: '200', SVC_SANDBOX_READ_DELAY_MS: '300' },
    });
    try {
      const { key } = await server.createProject('Rich Co');
      const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', { key, body: { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-test' } });
      assert.equal(saved.status, 200, saved.text);
      const page = await signedIn(server, key);

      await fillTemplate(page, 'sneaker_ready');
      await page.screenshot({ path: `${SCREENSHOTS}rich-template-form.png`, fullPage: true });
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByText('Template sneaker_ready (en_US) registered').waitFor();
      await page.locator('tr[data-template="sneaker_ready"] td[data-status="APPROVED"]').waitFor();
      const templates = (await server.call('GET', '/v1/templates', { key })).body as { name: string; components: unknown[] }[];
      assert.deepEqual(templates.find((template) => template.name === 'sneaker_ready')!.components, EXPECTED_COMPONENTS);

      const messageId = await sendFromConsole(page, 'sneaker_ready');
      const stored = await server.call('GET', `/v1/messages/${messageId}`, { key });
      assert.equal(stored.status, 200, stored.text);
      assert.deepEqual(stored.body.content, {
        header: { type: 'IMAGE', link: IMAGE_LINK },
        body: 'Hello Bia, your order A-2002 is ready.',
        footer: 'Acme Shoes',
        buttons: [
          { type: 'URL', text: 'Track order', url: 'https://shop.example.com/track/A-2002' },
          { type: 'QUICK_REPLY', text: 'Stop promotions', payload: 'STOP_PROMOS' },
        ],
      });
      await page.locator('.phone .bubble-media[data-format="IMAGE"]').waitFor();
      await page.locator('.timeline li[data-status="READ"]').waitFor();

      // The recipient taps "Stop promotions": the reply is on the message's timeline.
      const replied = await server.call('POST', `/v1/test-helpers/messages/${messageId}/reply`, { key, body: { buttonIndex: 1 } });
      assert.equal(replied.status, 200, replied.text);
      await page.reload();
      const reply = page.locator('.timeline li[data-event="message.replied"] .reply');
      await reply.waitFor();
      assert.equal(await reply.getAttribute('data-reply'), 'button');
      assert.equal(await reply.locator('q').textContent(), 'Stop promotions');
      assert.match((await reply.textContent())!, /payload STOP_PROMOS/);
      // Then writes back: a text reply, listed too.
      const wrote = await server.call('POST', `/v1/test-helpers/messages/${messageId}/reply`, { key, body: { text: 'Is it in size 42?' } });
      assert.equal(wrote.status, 200, wrote.text);
      await page.reload();
      const text = page.locator('.timeline li[data-event="message.replied"] .reply[data-reply="text"]');
      await text.waitFor();
      assert.equal(await text.locator('q').textContent(), 'Is it in size 42?');
      await page.screenshot({ path: `${SCREENSHOTS}rich-message.png`, fullPage: true });

      // A phone: the form, its preview and the message page fit 360 px.
      await page.setViewportSize({ width: 360, height: 780 });
      await noSideways(page, 360);
      await page.screenshot({ path: `${SCREENSHOTS}phone-rich-message.png`, fullPage: true });
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Templates', exact: true }).click();
      await page.locator('main table td').first().waitFor();
      await page.locator('form.template-form').getByLabel('Header type').selectOption('IMAGE');
      await noSideways(page, 360);
      await page.screenshot({ path: `${SCREENSHOTS}phone-rich-template-form.png`, fullPage: true });
      await page.context().close();
    } finally {
      await server.close();
    }
  });

  it('registers every other component type from the form, and sends each with the values its template needs', async () => {
    const server = await startTestServer('sqlite', {
      env: { SVC_SANDBOX_REVIEW_DELAY_MS: '300', SVC_SANDBOX_DELIVERY_DELAY_MS: '200', SVC_SANDBOX_READ_DELAY_MS: '300' },
    });
    const samples = await startSampleServer();
    try {
      const { key } = await server.createProject('Every Co');
      await server.call('PUT', '/v1/projects/me/provider-credentials', { key, body: { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-test' } });
      const page = await signedIn(server, key);
      const form = page.locator('form.template-form');
      const stored = async (name: string) => {
        await page.locator(`tr[data-template="${name}"] td[data-status="APPROVED"]`).waitFor();
        return ((await server.call('GET', '/v1/templates', { key })).body as { name: string; category: string; parameterFormat: string; components: any[] }[]).find((template) => template.name === name)!;
      };
      const register = async (name: string, fill: () => Promise<void>) => {
        await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Templates', exact: true }).click();
        await form.getByLabel('Name', { exact: true }).fill(name);
        await fill();
        await form.getByRole('button', { name: 'Register' }).click();
        await page.getByText(`Template ${name} (en_US) registered`).waitFor();
        return stored(name);
      };

      // NAMED parameters, a DOCUMENT header whose sample svc downloads, a phone and a copy-code button.
      const invoice = await register('invoice_ready', async () => {
        await form.getByLabel('Parameters').selectOption('NAMED');
        await form.getByLabel('Header type').selectOption('DOCUMENT');
        await form.getByLabel('Header sample from').selectOption('url');
        await form.getByLabel('Header sample', { exact: true }).fill(`${samples.url}/invoice.pdf`);
        await form.getByLabel('Body', { exact: true }).fill('Hi {{first_name}}, invoice {{invoice_no}} is attached.');
        await form.getByLabel('Body {{first_name}} example').fill('Ana');
        await form.getByLabel('Body {{invoice_no}} example').fill('F-1');
        await form.getByLabel('Button type').selectOption('PHONE_NUMBER');
        await form.getByRole('button', { name: 'Add button' }).click();
        await form.getByLabel('Button 1 text').fill('Call us');
        await form.getByLabel('Button 1 phone number').fill('+15550051310');
        await form.getByLabel('Button type').selectOption('COPY_CODE');
        await form.getByRole('button', { name: 'Add button' }).click();
        await form.getByLabel('Button 2 code example').fill('SAVE20');
        const preview = form.locator('.builder-preview .bubble');
        assert.equal(await preview.locator('.bubble-body').textContent(), 'Hi Ana, invoice F-1 is attached.');
        await preview.locator('.bubble-media[data-format="DOCUMENT"]').waitFor();
        assert.equal(await preview.locator('li[data-button="PHONE_NUMBER"] .button-detail').textContent(), '+15550051310');
        assert.equal(await preview.locator('li[data-button="COPY_CODE"] .button-detail').textContent(), 'SAVE20');
      });
      assert.equal(invoice.parameterFormat, 'NAMED');
      assert.deepEqual(invoice.components, [
        { type: 'HEADER', format: 'DOCUMENT', example: { header_url: [`${samples.url}/invoice.pdf`] } },
        {
          type: 'BODY',
          text: 'Hi {{first_name}}, invoice {{invoice_no}} is attached.',
          example: { body_text_named_params: [{ param_name: 'first_name', example: 'Ana' }, { param_name: 'invoice_no', example: 'F-1' }] },
        },
        { type: 'BUTTONS', buttons: [{ type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+15550051310' }, { type: 'COPY_CODE', example: 'SAVE20' }] },
      ]);
      assert.ok(samples.requested.includes('/invoice.pdf'), 'svc downloaded the sample');

      // A LOCATION header (no sample) and a VIDEO one (a handle).
      const pickup = await register('pickup_point', async () => {
        await form.getByLabel('Header type').selectOption('LOCATION');
        await form.getByLabel('Body', { exact: true }).fill('Your order {{1}} waits here.');
        await form.getByLabel('Body {{1}} example').fill('A-1');
        await form.locator('.builder-preview .bubble-media[data-format="LOCATION"]').waitFor();
      });
      assert.deepEqual(pickup.components[0], { type: 'HEADER', format: 'LOCATION' });
      const video = await register('unboxing_video', async () => {
        await form.getByLabel('Category').selectOption('MARKETING');
        await form.getByLabel('Header type').selectOption('VIDEO');
        await form.getByLabel('Header sample from').selectOption('handle');
        await form.getByLabel('Header sample', { exact: true }).fill('4::dmlkZW8=:ARb');
        await form.getByLabel('Body', { exact: true }).fill('See it unboxed.');
      });
      assert.deepEqual(video.components[0], { type: 'HEADER', format: 'VIDEO', example: { header_handle: ['4::dmlkZW8=:ARb'] } });

      // AUTHENTICATION, in Meta's model: the provider's texts, a copy-code button.
      const login = await register('login_code', async () => {
        await form.getByLabel('Category').selectOption('AUTHENTICATION');
        await form.getByLabel('Code expires after (minutes, optional)').fill('5');
        await form.getByLabel('Copy-code button text').fill('Copy code');
        assert.equal(await form.locator('.builder-preview .bubble-footer').textContent(), 'This code expires in 5 minutes.');
      });
      assert.equal(login.category, 'AUTHENTICATION');
      assert.equal(login.components[0].add_security_recommendation, true);
      assert.deepEqual(login.components.slice(1).map((component: any) => component.code_expiration_minutes ?? component.buttons), [5, [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }]]);

      const send = async (name: string, fill: (form: ReturnType<Page['locator']>) => Promise<void>) => {
        await page.goto(`${server.url}/console/messages`);
        await page.locator('details.send > summary').click();
        const sendForm = page.locator('details.send form');
        await sendForm.getByLabel('Template').selectOption({ label: `${name} (en_US)` });
        await sendForm.getByLabel('To', { exact: true }).fill('+5511987654321');
        await fill(sendForm);
        await sendForm.getByRole('button', { name: 'Send', exact: true }).click();
        await page.waitForURL(/\/console\/messages\/msg_/);
        return (await server.call('GET', `/v1/messages/${page.url().split('/').pop()}`, { key })).body.content;
      };
      const invoiceSent = await send('invoice_ready', async (sendForm) => {
        await sendForm.getByLabel('Header document link').fill('https://cdn.example.com/invoices/F-2.pdf');
        await sendForm.getByLabel('Document file name (optional)').fill('F-2.pdf');
        await sendForm.getByLabel('Body {{first_name}}').fill('Bia');
        await sendForm.getByLabel('Body {{invoice_no}}').fill('F-2');
        await sendForm.getByLabel('Button 2 “Copy offer code” coupon code').fill('SAVE30');
      });
      assert.deepEqual(invoiceSent.header, { type: 'DOCUMENT', link: 'https://cdn.example.com/invoices/F-2.pdf', filename: 'F-2.pdf' });
      assert.equal(invoiceSent.body, 'Hi Bia, invoice F-2 is attached.');
      assert.equal(invoiceSent.buttons.find((button: any) => button.type === 'COPY_CODE').couponCode, 'SAVE30');
      await page.locator('.phone .bubble-media[data-format="DOCUMENT"]').waitFor();

      const pickupSent = await send('pickup_point', async (sendForm) => {
        await sendForm.getByLabel('Latitude').fill('-23.5505');
        await sendForm.getByLabel('Longitude').fill('-46.6333');
        await sendForm.getByLabel('Place name (optional)').fill('Acme Store');
        await sendForm.getByLabel('Body {{1}}').fill('A-3');
      });
      assert.deepEqual(pickupSent.header, { type: 'LOCATION', latitude: -23.5505, longitude: -46.6333, name: 'Acme Store' });

      const videoSent = await send('unboxing_video', async (sendForm) => {
        await sendForm.getByLabel('Header video link').fill('https://cdn.example.com/unboxing.mp4');
      });
      assert.deepEqual(videoSent.header, { type: 'VIDEO', link: 'https://cdn.example.com/unboxing.mp4' });

      const loginSent = await send('login_code', async (sendForm) => {
        await sendForm.getByLabel('Body {{1}}').fill('123456');
      });
      assert.match(loginSent.body, /^\*123456\* is your verification code/);
      await page.screenshot({ path: `${SCREENSHOTS}rich-auth-message.png`, fullPage: true });
      await page.context().close();
    } finally {
      await server.close();
      await samples.close();
    }
  });

  it('shows a refused template’s field errors in the form’s words, never as JSON pointers', async () => {
    const server = await startTestServer('sqlite', { env: { SVC_SANDBOX_REVIEW_DELAY_MS: '300' } });
    try {
      const { key } = await server.createProject('Errors Co');
      await server.call('PUT', '/v1/projects/me/provider-credentials', { key, body: { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-test' } });
      const page = await signedIn(server, key);
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Templates', exact: true }).click();
      const form = page.locator('form.template-form');
      await form.getByLabel('Name', { exact: true }).fill('bad_phone');
      await form.getByLabel('Body', { exact: true }).fill('Call us when you like.');
      await form.getByLabel('Button type').selectOption('PHONE_NUMBER');
      await form.getByRole('button', { name: 'Add button' }).click();
      await form.getByLabel('Button 1 text').fill('Call us');
      // Not E.164: the API refuses it, naming /components/1/buttons/0/phone_number.
      await form.getByLabel('Button 1 phone number').fill('555-0100');
      await form.getByRole('button', { name: 'Register' }).click();
      const alert = form.getByRole('alert');
      await alert.waitFor();
      const text = (await alert.textContent())!;
      assert.doesNotMatch(text, /\/components|\/buttons|\/phone_number/, text);
      assert.match(text, /Button 1 phone number/, text);
      await page.screenshot({ path: `${SCREENSHOTS}rich-template-error.png`, fullPage: true });
      await page.context().close();
    } finally {
      await server.close();
    }
  });

  it('with the WhatsApp provider: the Graph API receives Meta’s shapes for what the console registered and sent', async () => {
    let setup: WhatsAppSetup | undefined;
    try {
      setup = await startWhatsApp('sqlite');
      const { server, fake } = setup as { server: TestServer; fake: FakeGraphApi };
      const { key } = await connectedProject(server);
      const page = await signedIn(server, key);
      // The badge is drawn with the project's name, from the same answer: once the name is there, so would it be.
      await page.locator('#project-name:not(:empty)').waitFor();
      assert.equal(await page.locator('header .badge-sandbox').count(), 0, 'no sandbox badge with the WhatsApp provider');
      await fillTemplate(page, 'sneaker_ready');
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByText('Template sneaker_ready (en_US) registered').waitFor();

      // What Meta was asked to review: the console's components, as they are.
      const created = fake.requests.find((request) => request.method === 'POST' && request.path.endsWith(`/${FAKE_WABA_ID}/message_templates`));
      assert.ok(created, `a template creation at the Graph API: ${fake.requests.map((request) => `${request.method} ${request.path}`).join(', ')}`);
      assert.equal(created.body.category, 'MARKETING');
      assert.deepEqual(created.body.components, EXPECTED_COMPONENTS);

      // Meta approves it, and says so by webhook.
      const templateId = ((await server.call('GET', '/v1/templates', { key })).body as { id: string; name: string }[]).find((template) => template.name === 'sneaker_ready')!.id;
      const providerTemplateId = await providerTemplateIdOf(server, templateId);
      fake.review(providerTemplateId, 'APPROVED');
      assert.equal((await postWebhook(server, templateWebhook(providerTemplateId, 'APPROVED'))).status, 200);
      await templateWith(server, key, templateId, (template) => template.status === 'APPROVED');
      await page.locator('tr[data-template="sneaker_ready"] td[data-status="APPROVED"]').waitFor();

      const messageId = await sendFromConsole(page, 'sneaker_ready');
      const sent = await until('the send at the Graph API', async () => fake.sends().find((request) => request.headers['idempotency-key'] !== undefined || request.body?.to) ?? undefined);
      assert.equal(sent.body.messaging_product, 'whatsapp');
      assert.equal(sent.body.type, 'template');
      assert.equal(sent.body.template.name, 'sneaker_ready');
      assert.deepEqual(sent.body.template.components, [
        { type: 'header', parameters: [{ type: 'image', image: { link: IMAGE_LINK } }] },
        { type: 'body', parameters: [{ type: 'text', text: 'Bia' }, { type: 'text', text: 'A-2002' }] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'A-2002' }] },
        { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'STOP_PROMOS' }] },
      ]);
      const stored = await server.call('GET', `/v1/messages/${messageId}`, { key });
      assert.deepEqual(stored.body.content.header, { type: 'IMAGE', link: IMAGE_LINK });
      await page.context().close();
    } finally {
      await setup?.close();
    }
  });

  it('threw no error in the pages', () => {
    assert.deepEqual(pageErrors, []);
  });
});
