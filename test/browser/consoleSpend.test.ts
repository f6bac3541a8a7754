import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { waitForStatus } from '../support/sending.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// The console's Analytics page shows what the project's delivered messages cost (GET
// /v1/analytics/cost), in Chromium, against svc with the sandbox and the bundled example card.

const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRED = process.env.SVC_TEST_BROWSER === 'required';
const missing = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set SVC_TEST_CHROMIUM)`;
if (missing && REQUIRED) throw new Error(`browser tests are required here, but there is ${missing}`);

describe('the console shows spend', { skip: missing }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let key: string;
  const pageErrors: string[] = [];

  before(async () => {
    server = await startTestServer('sqlite', { env: { SVC_SANDBOX_DELIVERY_DELAY_MS: '20', SVC_SANDBOX_READ_DELAY_MS: '20' } });
    ({ key } = await server.createProject('Spend Co'));
    const saved = await server.call('PUT', '/v1/projects/me/provider-credentials', {
      key,
      body: { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-test-token' },
    });
    assert.equal(saved.status, 200, saved.text);
    const created = await server.call('POST', '/v1/templates', {
      key,
      body: { name: 'spring_sale', language: 'en_US', category: 'MARKETING', components: [{ type: 'BODY', text: 'Sale, {{1}}!' }] },
    });
    assert.equal(created.status, 200, created.text);
    await server.call('POST', `/v1/test-helpers/templates/${created.body.id}/review`, { key, body: { status: 'APPROVED' } });
    // By the example card: Brazil marketing 0.0625 twice, North America marketing 0.025 once.
    for (const to of ['+5511987654321', '+5511987654322', '+14155550101']) {
      const sent = await server.call('POST', '/v1/messages', { key, body: { to, template: 'spring_sale', language: 'en_US', variables: { '1': 'Ana' } } });
      assert.equal(sent.status, 202, sent.text);
      await waitForStatus(server, key, sent.body.id, 'READ');
    }
    browser = await chromium.launch({ executablePath: CHROMIUM });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('gives the total and a row per market and category', async () => {
    await page.goto(`${server.url}/console`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Analytics', exact: true }).click();
    const spend = page.getByRole('region', { name: 'Spend' });
    await spend.getByTestId('spend-total').waitFor();
    assert.equal(await spend.getByTestId('spend-total').textContent(), '0.15 USD');
    const rows = spend.getByRole('table', { name: 'Spend by market and category' }).locator('tbody tr');
    await rows.first().waitFor();
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent?.trim())));
    assert.deepEqual(cells, [
      ['Brazil', 'marketing', '2', '0.125 USD'],
      ['North America', 'marketing', '1', '0.025 USD'],
    ]);
    assert.deepEqual(pageErrors, []);
  });
});
