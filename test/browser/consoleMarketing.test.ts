import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

// Issue 23 in the console (Debian's Chromium): the Marketing Messages setting on the Provider
// page (off / fallback / strict, saved through PUT /v1/projects/me/marketing-messages), and the
// route a message took on its page; screenshots at 1280 and 360 px, no sideways scrolling.

const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRED = process.env.SVC_TEST_BROWSER === 'required';
const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));
const missing = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set SVC_TEST_CHROMIUM)`;
if (missing && REQUIRED) throw new Error(`browser tests are required here, but there is ${missing}`);

describe('the console’s Marketing Messages setting and message routes', { skip: missing }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let key: string;
  const pageErrors: string[] = [];

  /** Full-page screenshots at desktop and phone width; the phone one must not scroll sideways. */
  async function shoot(name: string): Promise<void> {
    await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
    await page.setViewportSize({ width: 360, height: 780 });
    assert.ok(Number(await page.evaluate('document.documentElement.scrollWidth')) <= 360, `${name} fits 360 px`);
    await page.screenshot({ path: `${SCREENSHOTS}phone-${name}.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    server = await startTestServer('sqlite', { env: { SVC_SANDBOX_REVIEW_DELAY_MS: '100', SVC_SANDBOX_DELIVERY_DELAY_MS: '20', SVC_SANDBOX_READ_DELAY_MS: '20' } });
    ({ key } = await server.createProject('Marketing Co'));
    const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', {
      key,
      body: { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-test-token' },
    });
    assert.equal(saved.status, 200, saved.text);
    const created = await server.call('POST', '/v1/templates', {
      key,
      body: { name: 'spring_sale', language: 'en_US', category: 'MARKETING', components: [{ type: 'BODY', text: 'Sale, {{1}}!', example: { body_text: [['Ana']] } }] },
    });
    assert.equal(created.status, 200, created.text);
    await until('the template approved', async () => (await server.call('GET', `/v1/templates/${created.body.id}`, { key })).body.status === 'APPROVED');
    browser = await chromium.launch({ executablePath: CHROMIUM });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${server.url}/console`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the Marketing Messages setting on the Provider page and saves a new one', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Provider', exact: true }).click();
    const card = page.getByRole('form', { name: 'Marketing Messages' });
    await card.waitFor();
    assert.equal(await card.getByRole('radio', { name: /^Off/ }).isChecked(), true, 'off by default');
    await card.getByRole('radio', { name: /^Fallback/ }).check();
    await card.getByRole('button', { name: 'Save setting' }).click();
    await page.locator('form[data-mode="fallback"]').waitFor();
    assert.deepEqual((await server.call('GET', '/v1/projects/me/marketing-messages', { key })).body, { mode: 'fallback' });
    await page.reload();
    await page.getByRole('form', { name: 'Marketing Messages' }).getByRole('radio', { name: /^Fallback/ }).waitFor();
    assert.equal(await page.getByRole('form', { name: 'Marketing Messages' }).getByRole('radio', { name: /^Fallback/ }).isChecked(), true);
    await shoot('provider-marketing-messages');
    assert.deepEqual(pageErrors, []);
  });

  it('shows the route a message took on its page', async () => {
    const sent = await server.call('POST', '/v1/messages', { key, body: { to: '+5511987654321', template: 'spring_sale', language: 'en_US', variables: { '1': 'Ana' } } });
    assert.equal(sent.status, 202, sent.text);
    await waitForStatus(server, key, sent.body.id, 'READ');
    await page.goto(`${server.url}/console/messages/${sent.body.id}`);
    const facts = page.locator('dl.facts');
    await facts.getByText('Route', { exact: true }).waitFor();
    assert.equal(await facts.locator('dt:text-is("Route") + dd').innerText(), 'Marketing Messages API');
    await shoot('message-route');
    assert.deepEqual(pageErrors, []);
  });
});
