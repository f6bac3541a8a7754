import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page, type Route } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// "A console to live in" (issue 22) in Debian's Chromium: the onboarding checklist of a new
// project ticking step by step, a loading state and an error state on every page (the API held
// or failing through a route hook, never a timer), the template page and its delete, a
// delivery's request and response, message search, date filters and CSV export, the suppressions
// page, the sandbox badge, a second tab that needs no key, the Deliveries URL on one line, and
// every page at 1280 and 360 px (screenshots in artifacts/screenshots/, no sideways scrolling).

const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRED = process.env.SVC_TEST_BROWSER === 'required';
const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));
const WAIT_MS = 20_000;

/** An element as the page functions below read it (this file is type-checked without the DOM's types). */
type Dataset = { dataset: Record<string, string | undefined> };

const missing = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set SVC_TEST_CHROMIUM)`;
if (missing && REQUIRED) throw new Error(`browser tests are required here, but there is ${missing}`);

describe('the console to live in (Chromium)', { skip: missing }, () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let key = '';
  const pageErrors: string[] = [];
  const ids: { message?: string; template?: string; delivery?: string } = {};

  const api = (method: string, path: string, body?: unknown) => server.call(method, path, { key, body });
  const nav = (label: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true }).click();
  const shoot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });

  async function step(where: string, expected: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      await page.screenshot({ path: `${SCREENSHOTS}failed-live-${where.toLowerCase().replace(/\W+/g, '-')}.png`, fullPage: true }).catch(() => {});
      throw new Error(`On the ${where} page (${page.url()}), expected ${expected}: ${(error as Error).message.split('\n')[0]}`, { cause: error });
    }
  }

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    receiver = await startWebhookReceiver(() => ({ status: 400, body: '{"error":"not yet"}' }));
    server = await startTestServer('sqlite', {
      env: {
        SVC_SANDBOX_REVIEW_DELAY_MS: '300',
        SVC_SANDBOX_DELIVERY_DELAY_MS: '200',
        SVC_SANDBOX_READ_DELAY_MS: '300',
        SVC_WEBHOOK_RETRY_SCHEDULE: '10m',
      },
    });
    ({ key } = await server.createProject('Live Co'));
    browser = await chromium.launch({ executablePath: CHROMIUM });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
  });

  it('shows an empty project the onboarding checklist, each step ticking when done', async () => {
    const ticks = async () =>
      Object.fromEntries(
        await page.locator('.onboarding li').evaluateAll((items: Dataset[]) => items.map((item) => [item.dataset.step, item.dataset.done === 'true'])),
      );
    const reloadMessages = async () => {
      await page.reload();
      await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
    };
    await step('Messages', 'the four steps, none done, for a new project', async () => {
      await page.goto(`${server.url}/console`);
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.locator('.onboarding').waitFor();
      assert.deepEqual(await ticks(), { credentials: false, template: false, message: false, webhook: false });
      await shoot('onboarding-empty');
      await page.setViewportSize({ width: 360, height: 780 });
      assert.ok(Number(await page.evaluate('document.documentElement.scrollWidth')) <= 360, 'the checklist fits 360 px');
      await shoot('phone-onboarding-empty');
      await page.setViewportSize({ width: 1280, height: 800 });
    });
    await step('Messages', 'credentials ticked once saved', async () => {
      assert.equal((await api('PUT', '/v1/projects/me/provider-credentials', { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-live' })).status, 200);
      await reloadMessages();
      await page.locator('.onboarding li[data-step="credentials"][data-done="true"]').waitFor();
      assert.deepEqual(await ticks(), { credentials: true, template: false, message: false, webhook: false });
    });
    await step('Messages', 'template ticked once one is approved', async () => {
      const created = await api('POST', '/v1/templates', {
        name: 'welcome',
        language: 'en_US',
        category: 'UTILITY',
        components: [{ type: 'BODY', text: 'Hi {{1}}, welcome.', example: { body_text: [['Ana']] } }],
      });
      assert.equal(created.status, 200, created.text);
      ids.template = created.body.id;
      await until('the template approved', async () => (await api('GET', `/v1/templates/${ids.template}`)).body.status === 'APPROVED');
      await reloadMessages();
      await page.locator('.onboarding li[data-step="template"][data-done="true"]').waitFor();
      assert.deepEqual(await ticks(), { credentials: true, template: true, message: false, webhook: false });
    });
    await step('Messages', 'first message ticked once one is sent', async () => {
      const sent = await api('POST', '/v1/messages', { to: '+5511987654321', template: 'welcome', language: 'en_US', variables: { '1': 'Ana' } });
      assert.equal(sent.status, 202, sent.text);
      ids.message = sent.body.id;
      await reloadMessages();
      await page.locator('.onboarding li[data-step="message"][data-done="true"]').waitFor();
      assert.deepEqual(await ticks(), { credentials: true, template: true, message: true, webhook: false });
      await shoot('onboarding-three-done');
    });
    await step('Messages', 'the checklist gone once a webhook receives events', async () => {
      assert.equal((await api('PUT', '/v1/projects/me/provider-credentials', { callbackUrl: receiver.url })).status, 200);
      await reloadMessages();
      await page.locator('main table td').first().waitFor();
      assert.equal(await page.locator('.onboarding').count(), 0);
    });
  });

  it('shows the sandbox badge on every page, and which provider on the Provider page', async () => {
    await step('Messages', 'a visible “Sandbox” badge in the header', async () => {
      const badge = page.locator('header .badge-sandbox');
      await badge.waitFor();
      assert.equal(await badge.textContent(), 'Sandbox');
      assert.ok(await badge.isVisible());
    });
    await step('Provider', 'the provider named', async () => {
      await nav('Provider');
      await page.locator('.facts').getByText('sandbox: messages are simulated').waitFor();
    });
  });

  it('opens a second tab signed in (the key lent by the open tab), and signs every tab out together', async () => {
    const second = await context.newPage();
    second.setDefaultTimeout(WAIT_MS);
    second.on('pageerror', (error) => pageErrors.push(error.message));
    try {
      await step('Templates (new tab)', 'the page itself, not the sign-in form', async () => {
        await second.goto(`${server.url}/console/templates`);
        await second.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
        assert.equal(await second.evaluate('sessionStorage.getItem("svc.console.apiKey")'), key);
        assert.equal(await second.evaluate('localStorage.length'), 0, 'the key is never kept on disk');
        assert.deepEqual(await context.cookies(), []);
      });
      await step('Templates (new tab)', 'a sign-out there to sign the first tab out too', async () => {
        await second.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        assert.equal(await page.evaluate('sessionStorage.length'), 0);
      });
      await step('sign-in', 'a tab opened when none is signed in to ask for the key', async () => {
        await second.goto(`${server.url}/console/templates`);
        await second.getByRole('heading', { name: 'Sign in' }).waitFor();
      });
    } finally {
      await second.close();
    }
    // Back in, for the tests that follow.
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
    assert.equal(await page.getByText('That API key is not valid').count(), 0, 'no stale sign-in message');
  });

  /** Each page, the API path its content waits for, and what shows once it came. */
  const PAGES = () =>
    [
      ['Messages', '/console/messages', '/v1/messages', 'main table td'],
      ['Message', `/console/messages/${ids.message}`, `/v1/messages/${ids.message}`, '.timeline li'],
      ['Templates', '/console/templates', '/v1/templates', 'main table td'],
      ['Template', `/console/templates/${ids.template}`, `/v1/templates/${ids.template}`, '.facts'],
      ['Batches', '/console/batches', '/v1/batches', 'main .empty, main table td'],
      ['Webhooks', '/console/webhooks', '/v1/webhook-endpoints', 'main .empty, main table td'],
      ['Deliveries', '/console/deliveries', '/v1/webhook-deliveries', 'main table td'],
      ['Delivery', `/console/deliveries/${ids.delivery}`, `/v1/webhook-deliveries/${ids.delivery}`, '.request-body'],
      ['Suppressions', '/console/suppressions', '/v1/suppressions', 'main .empty, main table td'],
      ['API keys', '/console/keys', '/v1/api-keys', 'main table td'],
      ['Provider', '/console/provider', '/v1/projects/me', '.facts'],
    ] as const;

  it('has the delivery’s request payload, response status and body on its own page', async () => {
    await step('Deliveries', 'the failed message.sent delivery listed, its URL on one line', async () => {
      // A message sent now that the callback URL is set: its events are delivered (and refused).
      const sent = await api('POST', '/v1/messages', { to: '+5511900000003', template: 'welcome', language: 'en_US', variables: { '1': 'Cid' } });
      assert.equal(sent.status, 202, sent.text);
      ids.message = sent.body.id;
      const deliveries = await until('a failed delivery of the message', async () => {
        const listed = (await api('GET', `/v1/webhook-deliveries?messageId=${ids.message}`)).body as { id: string; event: string; attempts: unknown[] }[];
        return listed.find((delivery) => delivery.event === 'message.sent' && delivery.attempts.length > 0);
      });
      ids.delivery = deliveries.id;
      await nav('Deliveries');
      const cell = page.locator(`tr[data-delivery="${ids.delivery}"] td.url-cell`);
      await cell.waitFor();
      const lineHeight = await cell.evaluate((element) => parseFloat((globalThis as unknown as { getComputedStyle(e: unknown): { lineHeight: string } }).getComputedStyle(element).lineHeight));
      const box = (await cell.locator('code').boundingBox())!;
      assert.ok(box.height < lineHeight * 1.5, `the URL takes ${box.height} px, more than one line (${lineHeight} px)`);
      assert.equal(await cell.locator('code').getAttribute('title'), receiver.url, 'the whole URL in its title');
      await shoot('deliveries-desktop');
    });
    await step('Delivery', 'the request body and the response’s status and body', async () => {
      await page.locator(`tr[data-delivery="${ids.delivery}"] td a[href$="${ids.delivery}"]`).click();
      await page.getByRole('heading', { name: 'Webhook delivery: message.sent' }).waitFor();
      const sent = JSON.parse((await page.locator('pre.request-body').textContent())!);
      assert.equal(sent.message_id, ids.message);
      assert.equal(sent.event, 'message.sent');
      const attempt = page.locator('.attempt[data-attempt="1"]');
      assert.equal(await attempt.locator('.response-status').textContent(), 'HTTP 400');
      assert.equal(await attempt.locator('pre.response-body').textContent(), '{"error":"not yet"}');
      await shoot('delivery-desktop');
    });
  });

  it('shows a loading state on every page while the API is slow, and an error state when it fails', async () => {
    for (const [label, path, apiPath, ready] of PAGES()) {
      const matches = (url: URL) => url.pathname === apiPath;
      await step(label, 'a loading indicator while the API holds the answer, gone once it comes', async () => {
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const held = async (route: Route) => {
          await gate;
          await route.continue();
        };
        await page.route(matches, held);
        try {
          await page.goto(`${server.url}${path}`);
          const indicator = page.locator('main .loading[role="status"]');
          await indicator.waitFor();
          assert.match((await indicator.textContent())!, /^Loading .+…$/);
        } finally {
          release();
        }
        await page.locator(ready).first().waitFor();
        assert.equal(await page.locator('main .loading').count(), 0, 'no loading indicator left');
        await page.unroute(matches, held);
      });
      await step(label, 'an error state naming the problem when the API fails', async () => {
        const failing = (route: Route) =>
          route.fulfill({
            status: 500,
            contentType: 'application/problem+json',
            headers: { 'x-request-id': 'req_test_failure' },
            body: JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500, code: 'internal', detail: 'Something broke on the server (test).' }),
          });
        await page.route(matches, failing);
        try {
          await page.goto(`${server.url}${path}`);
          const alert = page.locator('main [role="alert"]');
          await alert.first().waitFor();
          assert.match((await alert.first().textContent())!, /Something broke on the server \(test\)/);
          assert.equal(await page.locator('main .loading').count(), 0, 'no loading indicator beside the error');
        } finally {
          await page.unroute(matches, failing);
        }
      });
    }
  });

  it('keeps a polled page’s content when a refresh fails, says so, and clears it once the API answers again', async () => {
    const matches = (url: URL) => url.pathname === '/v1/messages';
    const failing = (route: Route) =>
      route.fulfill({ status: 500, contentType: 'application/problem+json', body: JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500, code: 'internal', detail: 'The refresh failed (test).' }) });
    await step('Messages', 'a “could not refresh” note above the list that stays', async () => {
      await page.goto(`${server.url}/console/messages`);
      await page.locator('main table td').first().waitFor();
      await page.route(matches, failing);
      const note = page.locator('main .refresh-error');
      await note.waitFor();
      assert.match((await note.textContent())!, /Could not refresh this page: The refresh failed \(test\)/);
      assert.ok((await page.locator('main tbody tr').count()) > 0, 'the list is still shown');
    });
    await step('Messages', 'the note gone once a refresh works', async () => {
      await page.unroute(matches, failing);
      await page.locator('main .refresh-error').waitFor({ state: 'detached' });
    });
  });

  it('opens the template page and deletes the template there', async () => {
    const spare = await api('POST', '/v1/templates', { name: 'spare_one', language: 'en_US', category: 'MARKETING', components: [{ type: 'BODY', text: 'A spare template.' }] });
    assert.equal(spare.status, 200, spare.text);
    await step('Templates', 'the template’s page from its name in the list', async () => {
      await page.goto(`${server.url}/console/templates`);
      await page.locator('tr[data-template="spare_one"] th a').click();
      await page.getByRole('heading', { name: 'Template spare_one (en_US)' }).waitFor();
      assert.equal(await page.locator('.phone .bubble-body').textContent(), 'A spare template.');
      await page.locator('.facts').getByText('MARKETING').waitFor();
      await shoot('template-desktop');
    });
    await step('Template', 'Delete (after confirming) to delete it and go back to the list', async () => {
      await page.getByRole('button', { name: 'Delete template' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
      await page.waitForURL(/\/console\/templates$/);
      await page.locator('tr[data-template="welcome"]').waitFor();
      assert.equal(await page.locator('tr[data-template="spare_one"]').count(), 0);
      assert.equal((await api('GET', `/v1/templates/${spare.body.id}`)).status, 404);
    });
    await step('Template', 'a registered template’s status shown as it is now, not as it was registered', async () => {
      await page.goto(`${server.url}/console/templates/${ids.template}`);
      await page.locator('.facts [data-status="APPROVED"]').waitFor();
      assert.equal(await page.getByText('PENDING').count(), 0);
      // From an approved template's page straight to the send form, the template chosen.
      await page.getByRole('link', { name: 'Send a message with it' }).click();
      await page.locator('details.send[open]').waitFor();
      await until('the template chosen', async () => (await page.locator('details.send form select[name="template"]').inputValue()) === ids.template);
      await page.getByLabel('Body {{1}}').waitFor();
    });
  });

  it('searches messages by id or phone number, filters them by date, and exports the list as CSV', async () => {
    for (const to of ['+5511900000001', '+5511900000002']) {
      const sent = await api('POST', '/v1/messages', { to, template: 'welcome', language: 'en_US', variables: { '1': 'Bia' } });
      assert.equal(sent.status, 202, sent.text);
    }
    const search = async (text: string) => {
      await page.goto(`${server.url}/console/messages`);
      await page.getByLabel('Search').fill(text);
      await page.getByRole('button', { name: 'Filter' }).click();
    };
    await step('Messages', 'a message id to open that message', async () => {
      await search(ids.message!);
      await page.waitForURL(new RegExp(`/console/messages/${ids.message}$`));
      await page.locator('.facts').waitFor();
    });
    await step('Messages', 'a phone number to list that number’s messages only', async () => {
      await search('+5511900000002');
      await page.waitForURL(/q=%2B5511900000002/);
      await until('one row', async () => (await page.locator('main tbody tr').count()) === 1);
      assert.equal(await page.locator('main tbody tr td').nth(1).textContent(), '+5511900000002');
    });
    const today = new Date();
    const day = (offset: number) => {
      const date = new Date(today.getFullYear(), today.getMonth(), today.getDate() + offset);
      return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
    };
    await step('Messages', 'today’s date to keep every message, and until yesterday none', async () => {
      await page.goto(`${server.url}/console/messages`);
      await page.getByLabel('Queued from').fill(day(0));
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/from=/);
      await until('four rows', async () => (await page.locator('main tbody tr').count()) === 4);
      await page.goto(`${server.url}/console/messages?until=${day(-1)}`);
      await page.getByText('No message matches.').waitFor();
    });
    await step('Messages', 'Export CSV to download the filtered list', async () => {
      await page.goto(`${server.url}/console/messages?q=%2B5511900000001`);
      await page.locator('main tbody tr').first().waitFor();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
      assert.match(download.suggestedFilename(), /^messages-\d{4}-\d\d-\d\d\.csv$/);
      const lines = readFileSync((await download.path())!, 'utf8').trim().split(/\r\n/);
      assert.equal(lines[0], 'id,to,template,language,status,queuedAt,sentAt,deliveredAt,readAt,failedAt,errorCode,errorTitle,batchId');
      assert.equal(lines.length, 2, lines.join('\n'));
      assert.match(lines[1]!, /^msg_\w+,\+5511900000001,welcome,en_US,/);
      await page.getByText('1 message exported.').waitFor();
      await page.goto(`${server.url}/console/messages`);
      await page.locator('main tbody tr').first().waitFor();
      const [all] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
      assert.equal(readFileSync((await all.path())!, 'utf8').trim().split(/\r\n/).length, 5, 'the header and four messages');
    });
  });

  it('lists, adds and removes suppressed numbers', async () => {
    await step('Suppressions', 'a number added to be listed and refused by sends', async () => {
      await nav('Suppressions');
      await page.getByText('No number is suppressed').waitFor();
      await page.getByLabel('Phone number').fill('+5511900000009');
      await page.getByLabel('Reason (optional)').fill('Asked by phone');
      await page.getByRole('button', { name: 'Add to the list' }).click();
      const row = page.locator('tr[data-number="+5511900000009"]');
      await row.waitFor();
      await row.getByText('Asked by phone').waitFor();
      const refused = await api('POST', '/v1/messages', { to: '+5511900000009', template: 'welcome', language: 'en_US', variables: { '1': 'X' } });
      assert.equal(refused.status, 422);
      assert.equal(refused.body.code, 'recipient_suppressed');
      await shoot('suppressions-desktop');
    });
    await step('Suppressions', 'a bad number refused with the field named in words', async () => {
      await page.getByLabel('Phone number').fill('12');
      await page.getByRole('button', { name: 'Add to the list' }).click();
      const alert = page.locator('main form [role="alert"]');
      await alert.waitFor();
      assert.doesNotMatch((await alert.textContent())!, /(^|\s)\/phoneNumber/);
    });
    await step('Suppressions', 'Remove (after confirming) to take it off the list', async () => {
      await page.getByRole('button', { name: 'Remove +5511900000009' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
      await page.locator('tr[data-number="+5511900000009"]').waitFor({ state: 'detached' });
      assert.equal((await api('GET', '/v1/suppressions/%2B5511900000009')).status, 404);
    });
  });

  it('fits 1280 and 360 px on every page: screenshots of each, nothing scrolling sideways at 360', async () => {
    for (const width of [1280, 360]) {
      await page.setViewportSize({ width, height: width === 360 ? 780 : 800 });
      for (const [label, path, , ready] of PAGES()) {
        await step(label, `the page within ${width} px`, async () => {
          await page.goto(`${server.url}${path}`);
          await page.locator(ready).first().waitFor();
          await shoot(`live-${width}-${label.toLowerCase().replace(/\W+/g, '-')}`);
          const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
          assert.ok(scrollWidth <= width, `the page is ${scrollWidth} px wide`);
          if (width === 360) {
            for (const button of await page.locator('main button').all()) {
              if (!(await button.isVisible())) continue;
              const box = (await button.boundingBox())!;
              assert.ok(box.x >= 0 && box.x + box.width <= 360, `"${await button.textContent()}" is off-screen`);
            }
          }
        });
      }
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('keeps an announcement its six seconds, whatever the page before announced (a paused clock)', async () => {
    // A context of its own: no open tab lends it the key, so it signs in as a first visit does.
    const own = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await own.newPage();
    tab.setDefaultTimeout(WAIT_MS);
    tab.on('pageerror', (error) => pageErrors.push(error.message));
    const toast = tab.locator('#announcer');
    // Each time the toast's text is set, even to the text it shows, <html data-announced> counts it:
    // the second save announces what the first left on screen, so only the count says it came.
    const countAnnouncements = () =>
      tab.evaluate(`{
        const root = document.documentElement;
        root.dataset.announced = '0';
        new MutationObserver((changes) => {
          const n = changes.filter((change) => change.target instanceof Element && change.target.id === 'announcer').length;
          root.dataset.announced = String(Number(root.dataset.announced) + n);
        }).observe(document.body, { childList: true, subtree: true });
      }`);
    const announced = async () => Number(await tab.locator('html').getAttribute('data-announced'));
    const saveCallback = async () => {
      await tab.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Provider', exact: true }).click();
      const before = await announced();
      await tab.getByRole('button', { name: 'Save URL' }).click();
      await tab.locator(`html[data-announced]:not([data-announced="${before}"])`).waitFor({ state: 'attached' });
      assert.equal((await toast.textContent())?.trim(), 'Callback URL saved.');
    };
    try {
      await step('Provider', 'the toast of the page shown, not cleared by the timer of the page before', async () => {
        // The Provider page's callback form needs saved credentials.
        assert.equal((await api('PUT', '/v1/projects/me/provider-credentials', { providerPhoneNumberId: '1065550001', providerAccessToken: 'EAAG-live' })).status, 200);
        assert.equal((await api('PUT', '/v1/projects/me/provider-credentials', { callbackUrl: receiver.url })).status, 200);
        await tab.goto(`${server.url}/console`);
        await tab.getByLabel('API key').fill(key);
        await tab.getByRole('button', { name: 'Sign in', exact: true }).click();
        await tab.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
        await countAnnouncements();
        // From here the page's timers fire only when the test moves its clock.
        await tab.clock.install();
        await tab.clock.pauseAt(Date.now() + 60_000);
        await saveCallback();
        await tab.clock.runFor(4000);
        // Another page, then the Provider page again: a new render of it announces again.
        await tab.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Messages', exact: true }).click();
        await tab.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
        await saveCallback();
        // Six seconds after the first announcement, four after the second: the second is still shown.
        await tab.clock.runFor(3000);
        assert.equal((await toast.textContent())?.trim(), 'Callback URL saved.');
        await tab.clock.runFor(4000);
        assert.equal((await toast.textContent())?.trim(), '');
      });
    } finally {
      await own.close();
    }
  });

  it('threw no error in the pages', () => {
    assert.deepEqual(pageErrors, []);
  });
});
