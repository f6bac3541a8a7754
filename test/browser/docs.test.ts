import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { OPERATION_EXAMPLES } from '../../src/http/openapi/examples.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// The API reference (/docs) in a real browser (Debian's Chromium, playwright-core) as a reader
// meets it: operations named with verbs, the examples of src/http/openapi/examples.ts, the SDK
// and CLI samples beside curl, the API key preset, no toolbar of Scalar's own — and a clean
// load: no console error, no failed or refused request, nothing from another origin. The time to
// the first operation title is printed (never asserted: it depends on the machine).

const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRED = process.env.SVC_TEST_BROWSER === 'required';
const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));
const WAIT_MS = 30_000;

const missing = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set SVC_TEST_CHROMIUM)`;
if (missing && REQUIRED) throw new Error(`browser tests are required here, but there is ${missing}`);

interface Watched {
  page: Page;
  /** Console errors, page errors, failed requests, 4xx/5xx answers and requests to another origin. */
  faults: string[];
}

describe('the API reference (/docs) in Chromium', { skip: missing }, () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    server = await startTestServer('sqlite');
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A fresh page (no cache) that records everything that went wrong while it loads. */
  async function watchedPage(): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    const faults: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') faults.push(`console error: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => faults.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => faults.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
    page.on('response', (response) => {
      if (response.status() >= 400) faults.push(`${response.status()}: ${response.url()}`);
    });
    page.on('request', (request) => {
      if (!request.url().startsWith(`${server.url}/`) && !request.url().startsWith('data:')) faults.push(`another origin: ${request.url()}`);
    });
    // Nothing may leave this server; were anything to try, it fails here instead of hanging.
    await page.route((url) => !url.href.startsWith(server.url) && url.protocol !== 'data:', (route) => route.abort());
    return { page, faults };
  }

  it('renders operations named with verbs, cleanly: no console error, no failed request, no toolbar', async () => {
    // The first visit also loads Scalar's module into the server (once per process): not timed.
    const warm = await watchedPage();
    await warm.page.goto(`${server.url}/docs/`);
    await warm.page.getByText('Create a project', { exact: true }).first().waitFor();
    await warm.page.context().close();

    const { page, faults } = await watchedPage();
    const started = performance.now();
    await page.goto(`${server.url}/docs/`);
    await page.getByText('Create a project', { exact: true }).first().waitFor();
    const firstTitleMs = Math.round(performance.now() - started);
    await page.waitForLoadState('networkidle');
    console.log(`# /docs: first operation title after ${firstTitleMs} ms (cold cache, server warm)`);

    await page.getByText('Messages', { exact: true }).first().click();
    await page.getByText('List messages', { exact: true }).first().waitFor();
    await page.screenshot({ path: `${SCREENSHOTS}docs.png` });
    const text = await page.locator('body').innerText();
    for (const toolbar of ['Deploy', 'Share', 'Developer Tools', 'Configure', 'No authentication selected']) {
      assert.ok(!text.includes(toolbar), `"${toolbar}" is on the page`);
    }
    assert.match(text, /Selected Auth Type: bearer/);
    await page.waitForLoadState('networkidle');
    assert.deepEqual(faults, []);
    await page.context().close();
  });

  it('shows an operation with its example request and answer, and the SDK and CLI samples beside curl', async () => {
    const { page, faults } = await watchedPage();
    await page.goto(`${server.url}/docs/#tag/messages/POST/v1/messages`);
    const operation = page.locator('[id$="tag/messages/POST/v1/messages"]').first();
    await operation.getByRole('heading', { name: 'Send a message' }).waitFor();
    const example = OPERATION_EXAMPLES.sendMessage!;
    const request = example.request as { to: string; template: string };
    const sample = () => operation.locator('pre').first().innerText();
    await operation.getByText(request.to).first().waitFor();
    assert.match(await sample(), /^curl /m);
    assert.match(await sample(), /Authorization: Bearer/);
    assert.ok((await operation.innerText()).includes((example.responses!['202'] as { id: string }).id), 'the 202 example is shown');

    await operation.getByText('Shell Curl').first().click();
    assert.deepEqual(await page.getByRole('option').allInnerTexts(), ['SDK (TypeScript)', 'CLI', 'Curl']);
    await page.getByRole('option', { name: 'SDK (TypeScript)' }).click();
    await operation.getByText('createSvcClient').first().waitFor();
    assert.match(await sample(), /svc\.POST\('\/v1\/messages'/);
    await page.screenshot({ path: `${SCREENSHOTS}docs-send-a-message-sdk.png` });

    await operation.getByText('SDK (TypeScript)').first().click();
    await page.getByRole('option', { name: 'CLI' }).click();
    await operation.getByText('svc send').first().waitFor();
    assert.match(await sample(), new RegExp(`svc send --to \\${request.to} --template ${request.template}`));
    assert.deepEqual(faults, []);
    await page.context().close();
  });
});
