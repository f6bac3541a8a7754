import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { OPERATION_EXAMPLES } from '../../src/http/openapi/examples.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// The API reference (/docs) in a real browser (Debian's Chromium, playwright-core) as a reader
// meets it: every operation titled with its verb, the examples of src/http/openapi/examples.ts,
// curl / SDK / CLI tabs, the API key preset filling the samples, "Try it" answered by this live
// server, and a clean, light load: no console error, no failed request, nothing from another
// origin, few requests and few bytes (budgets, not timings: bench/docsLoad.ts times it).

const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRED = process.env.SVC_TEST_BROWSER === 'required';
const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));
const WAIT_MS = 30_000;
/** What a first visit may transfer (page, stylesheet, script, icon; bodies as sent). */
const BYTES_BUDGET = 300_000;
const REQUESTS_BUDGET = 5;

const missing = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set SVC_TEST_CHROMIUM)`;
if (missing && REQUIRED) throw new Error(`browser tests are required here, but there is ${missing}`);

interface Watched {
  page: Page;
  /** Console errors, page errors, failed requests, 4xx/5xx answers and requests to another origin. */
  faults: string[];
  /** Every finished request: its URL and the bytes of its answer's body as transferred. */
  loaded: { url: string; bytes: number }[];
}

type Json = Record<string, any>;

describe('the API reference (/docs) in Chromium', { skip: missing }, () => {
  let server: TestServer;
  let browser: Browser;
  let key = '';
  let document: Json;

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    server = await startTestServer('sqlite');
    ({ key } = await server.createProject('Docs Reader Co'));
    document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A fresh page (new context: no cache, no storage) that records what went wrong and what loaded. */
  async function watchedPage(width = 1280): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    const faults: string[] = [];
    const loaded: Watched['loaded'] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') faults.push(`console error: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => faults.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => faults.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
    page.on('requestfinished', (request) => {
      void request.sizes().then((sizes) => loaded.push({ url: request.url(), bytes: sizes.responseBodySize }));
    });
    page.on('response', (response) => {
      if (response.status() >= 400) faults.push(`${response.status()}: ${response.url()}`);
    });
    page.on('request', (request) => {
      if (!request.url().startsWith(`${server.url}/`) && !request.url().startsWith('data:')) faults.push(`another origin: ${request.url()}`);
    });
    // Nothing may leave this server; were anything to try, it fails here instead of hanging.
    await page.route((url) => !url.href.startsWith(server.url) && url.protocol !== 'data:', (route) => route.abort());
    return { page, faults, loaded };
  }

  it('loads cleanly within its budgets and titles every operation with its verb', async () => {
    const { page, faults, loaded } = await watchedPage();
    await page.goto(`${server.url}/docs/`);
    await page.getByRole('heading', { name: 'Create a project', exact: true }).waitFor();
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: `${SCREENSHOTS}docs.png` });

    const titles: Record<string, string> = await page.evaluate(
      'Object.fromEntries([...document.querySelectorAll("section.operation")].map((section) => [section.id, section.querySelector("h3").textContent]))',
    );
    for (const item of Object.values<Json>(document.paths)) {
      for (const operation of Object.values<Json>(item)) assert.equal(titles[operation.operationId], operation.summary, operation.operationId);
    }
    for (const name of Object.keys(document.webhooks)) await page.locator('section.operation code', { hasText: name }).first().waitFor({ state: 'attached' });

    const text = await page.locator('body').innerText();
    for (const foreign of ['Scalar', 'Deploy', 'Share', 'Developer Tools', 'No authentication selected']) {
      assert.ok(!text.includes(foreign), `"${foreign}" is on the page`);
    }
    const bytes = loaded.reduce((sum, request) => sum + request.bytes, 0);
    console.log(`# /docs first visit: ${loaded.length} requests, ${bytes} bytes (${loaded.map((request) => `${new URL(request.url).pathname} ${request.bytes}`).join(', ')})`);
    assert.ok(loaded.length <= REQUESTS_BUDGET, `${loaded.length} requests`);
    assert.ok(bytes < BYTES_BUDGET, `${bytes} bytes transferred`);
    assert.deepEqual(faults, []);
    await page.context().close();
  });

  it('shows an operation’s examples and curl, SDK and CLI samples in tabs, by deep link', async () => {
    const { page, faults } = await watchedPage();
    await page.goto(`${server.url}/docs/#sendMessage`);
    const operation = page.locator('#sendMessage');
    await operation.getByRole('heading', { name: 'Send a message' }).waitFor();
    const example = OPERATION_EXAMPLES.sendMessage!;
    const request = example.request as { to: string; template: string };
    const samples = operation.locator('.tabs[data-tabs="lang"]');
    const shown = () => samples.locator('[role="tabpanel"]:visible').innerText();
    assert.deepEqual(await samples.getByRole('tab').allInnerTexts(), ['curl', 'TypeScript SDK', 'CLI']);
    assert.match(await shown(), /^curl -X POST /);
    assert.ok((await shown()).includes(`${server.url}/v1/messages`), 'the sample calls this server');
    assert.ok((await operation.innerText()).includes((example.responses!['202'] as { id: string }).id), 'the 202 example is shown');

    await samples.getByRole('tab', { name: 'TypeScript SDK' }).click();
    assert.match(await shown(), /svc\.POST\('\/v1\/messages'/);
    assert.match(await shown(), /createSvcClient/);
    await page.screenshot({ path: `${SCREENSHOTS}docs-send-a-message-sdk.png` });
    await samples.getByRole('tab', { name: 'CLI' }).click();
    assert.match(await shown(), new RegExp(`svc send --to \\${request.to} --template ${request.template}`));
    // One language for the page: another operation shows its CLI sample too.
    assert.match(await page.locator('#listMessages .tabs[data-tabs="lang"] [role="tabpanel"]:visible').innerText(), /^svc messages list/);

    const statuses = operation.locator('.tabs[data-tabs="status"]');
    await statuses.getByRole('tab', { name: '422' }).click();
    assert.match(await statuses.locator('[role="tabpanel"]:visible').innerText(), /recipient_suppressed/);
    assert.deepEqual(faults, []);
    await page.context().close();
  });

  it('fills the samples with the API key typed once, and "Try it" calls the live service with it', async () => {
    const { page, faults } = await watchedPage();
    await page.goto(`${server.url}/docs/#getProject`);
    await page.getByRole('textbox', { name: 'API key', exact: true }).fill(key);
    await page.getByRole('button', { name: 'Use this key' }).click();
    const curl = page.locator('#getProject [data-panel="curl"]');
    await curl.getByText(`Bearer ${key}`).waitFor();
    assert.equal(await page.evaluate('sessionStorage.getItem("svc-docs-api-key")'), key, 'kept for this tab only');

    const operation = page.locator('#getProject');
    await operation.getByText('Try it').click();
    await operation.getByRole('button', { name: 'Send GET request' }).click();
    const result = operation.locator('.try-result');
    await result.getByText('200 OK').waitFor();
    assert.match(await result.innerText(), /"name": "Docs Reader Co"/);

    // A reload keeps the key (same tab); "Forget" drops it and the placeholder comes back.
    await page.reload();
    await curl.getByText(`Bearer ${key}`).waitFor();
    await page.getByRole('button', { name: 'Forget' }).click();
    await curl.getByText('Bearer svc_live_YOUR_API_KEY').waitFor();
    assert.deepEqual(faults, []);
    await page.context().close();
  });

  it('reads at 360 px: no sideways scrolling, contents folded', async () => {
    const { page, faults } = await watchedPage(360);
    await page.goto(`${server.url}/docs/`);
    await page.getByRole('heading', { name: 'Create a project', exact: true }).waitFor();
    await page.waitForLoadState('load');
    assert.ok(Number(await page.evaluate('document.documentElement.scrollWidth')) <= 360, 'nothing wider than the screen');
    assert.equal(await page.evaluate('document.querySelector(".sidebar .menu").open'), false);
    await page.screenshot({ path: `${SCREENSHOTS}phone-docs.png` });
    await page.goto(`${server.url}/docs/#sendMessage`);
    await page.locator('#sendMessage').getByRole('heading', { name: 'Send a message' }).waitFor();
    assert.ok(Number(await page.evaluate('document.documentElement.scrollWidth')) <= 360, 'an operation fits too');
    await page.screenshot({ path: `${SCREENSHOTS}phone-docs-send-a-message.png` });
    assert.deepEqual(faults, []);
    await page.context().close();
  });
});
