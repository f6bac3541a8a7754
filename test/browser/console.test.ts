import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

// The web console in a real browser (Debian's Chromium, driven by playwright-core) against a
// real svc (SQLite, sandbox provider with fast timings): what a new user does, page by page.
// Each step says which page it was on and what it expected when it fails, and every main page
// leaves a screenshot in artifacts/screenshots/ (CI keeps them).

const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const REQUIRED = process.env.SVC_TEST_BROWSER === 'required';
const SCREENSHOTS = fileURLToPath(new URL('../../artifacts/screenshots/', import.meta.url));
const WAIT_MS = 20_000;

const missing = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set SVC_TEST_CHROMIUM)`;
if (missing && REQUIRED) throw new Error(`browser tests are required here, but there is ${missing}`);

describe('the web console in Chromium', { skip: missing }, () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiverUp = false;
  const offOrigin: string[] = [];
  const pageErrors: string[] = [];
  const state: { apiKey?: string; messageId?: string } = {};

  /** Runs a step; a failure names the page and what was expected there, and leaves a screenshot. */
  async function step(where: string, expected: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      await page.screenshot({ path: `${SCREENSHOTS}failed-${where.toLowerCase().replace(/\W+/g, '-')}.png`, fullPage: true }).catch(() => {});
      throw new Error(`On the ${where} page (${page.url()}), expected ${expected}: ${(error as Error).message.split('\n')[0]}`, { cause: error });
    }
  }

  const shoot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
  const nav = (label: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true }).click();
  const api = (method: string, path: string, body?: unknown, key = state.apiKey) => server.call(method, path, { key, body });

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    // Until told otherwise the receiver refuses with a 400: a failed delivery that does not count
    // toward the circuit breaker, which a 5xx would open after five (holding the retry back).
    receiver = await startWebhookReceiver(() => (receiverUp ? { status: 204 } : { status: 400, body: 'not yet' }));
    server = await startTestServer('sqlite', {
      env: {
        SVC_SANDBOX_REVIEW_DELAY_MS: '300',
        SVC_SANDBOX_DELIVERY_DELAY_MS: '200',
        SVC_SANDBOX_READ_DELAY_MS: '300',
        // A failed delivery waits long enough for the console's retry to be the next attempt.
        SVC_WEBHOOK_RETRY_SCHEDULE: '10m',
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    page.on('request', (request) => {
      if (!request.url().startsWith(`${server.url}/`)) offOrigin.push(request.url());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      // A 4xx the page handles (a refused form) is logged as a failed resource; anything else is a fault.
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) pageErrors.push(message.text());
    });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
  });

  it('creates a project and signs in with its key, which stays in session storage only', async () => {
    await step('sign-in', 'a form to create a project that shows the first key once', async () => {
      await page.goto(`${server.url}/console`);
      await shoot('sign-in');
      // A wrong key first: its message must not outlive the next success.
      await page.getByLabel('API key').fill('svc_live_not_a_real_key');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').getByText('That API key is not valid').waitFor();
      await page.getByLabel('Project name').fill('Browser Co');
      await page.getByLabel('Owner e-mail').fill('owner@example.com');
      await page.getByRole('button', { name: 'Create project' }).click();
      state.apiKey = (await page.locator('.key-value').textContent())!.trim();
      assert.match(state.apiKey, /^svc_live_/);
      assert.equal(await page.getByText('That API key is not valid').count(), 0, 'the stale sign-in message is gone');
    });
    await step('sign-in', 'a Copy button beside the one-time key that copies it', async () => {
      await page.locator('main .secret').getByRole('button', { name: 'Copy' }).click();
      await page.getByText('Copied to the clipboard.').waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), state.apiKey);
    });
    await step('sign-in', 'signing in with that key to lead to the messages page', async () => {
      await page.getByRole('button', { name: 'Sign in with this key' }).click();
      await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
      assert.equal(await page.evaluate('sessionStorage.getItem("svc.console.apiKey")'), state.apiKey);
      assert.deepEqual(await context.cookies(), [], 'no cookie');
    });
  });

  it('saves the provider credentials and the callback URL, never showing the token', async () => {
    await step('Provider', 'the credentials to save and the token to stay hidden', async () => {
      await nav('Provider');
      await page.getByLabel('Phone number id').fill('106540352242922');
      await page.getByLabel('Access token').fill('EAAG-browser-secret-token');
      await page.getByRole('button', { name: 'Save credentials' }).click();
      await page.getByText('saved (never shown)').waitFor();
      assert.equal(await page.getByLabel('Access token').inputValue(), '');
      assert.ok(!(await page.content()).includes('EAAG-browser-secret-token'), 'the token is nowhere in the page');
    });
    await step('Provider', 'the callback URL to be saved and shown', async () => {
      await page.getByLabel('URL', { exact: true }).fill(receiver.url);
      await page.getByRole('button', { name: 'Save URL' }).click();
      await page.locator('.facts').getByText(receiver.url).waitFor();
      await shoot('provider');
    });
  });

  it('registers a template with a live preview and sees it approved; a rejected one shows its reason', async () => {
    await step('Templates', 'a live preview filled with the example values', async () => {
      await nav('Templates');
      await page.getByLabel('Name', { exact: true }).fill('order_update');
      await page.getByLabel('Language').fill('en_US');
      await page.getByLabel('Header (optional)').fill('Order {{1}}');
      await page.getByLabel('Body', { exact: true }).fill('Hello {{1}}, your order {{2}} has shipped.');
      await page.getByLabel('Footer (optional)').fill('Acme Shop');
      await page.getByLabel('Header {{1}} example').fill('#1001');
      await page.getByLabel('Body {{1}} example').fill('Ana');
      await page.getByLabel('Body {{2}} example').fill('#1001');
      const preview = page.locator('form .bubble');
      assert.equal(await preview.locator('.bubble-header').textContent(), 'Order #1001');
      assert.equal(await preview.locator('.bubble-body').textContent(), 'Hello Ana, your order #1001 has shipped.');
      assert.equal(await preview.locator('.bubble-footer').textContent(), 'Acme Shop');
    });
    await step('Templates', 'order_update to be registered, then shown APPROVED by the polling list', async () => {
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByText('Template order_update (en_US) registered').waitFor();
      await page.locator('tr[data-template="order_update"] td[data-status="APPROVED"]').waitFor();
    });
    await step('Templates', 'a template the sandbox rejects to show REJECTED with its reason', async () => {
      await page.getByLabel('Name', { exact: true }).fill('reject_this_one');
      await page.getByLabel('Body', { exact: true }).fill('A template the sandbox rejects by its name.');
      await page.getByRole('button', { name: 'Register' }).click();
      const row = page.locator('tr[data-template="reject_this_one"]');
      await row.locator('td[data-status="REJECTED"]').waitFor();
      const reason = (await row.locator('td').nth(3).textContent())!;
      assert.ok(reason.length > 3 && reason !== '—', `a rejection reason, got "${reason}"`);
      await shoot('templates');
    });
  });

  it('sends a message from the console and watches it reach READ, with its content and timeline', async () => {
    await step('Messages', 'the send form to list the approved template and send', async () => {
      await nav('Messages');
      await page.getByText('Send a message', { exact: true }).first().click();
      await page.getByLabel('Template').first().selectOption({ label: 'order_update (en_US)' });
      await page.getByLabel('To', { exact: true }).first().fill('+5511987654321');
      await page.getByLabel('Header {{1}}').fill('#2002');
      await page.getByLabel('Body {{1}}').fill('Bia');
      await page.getByLabel('Body {{2}}').fill('#2002');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.waitForURL(/\/console\/messages\/msg_/);
      state.messageId = page.url().split('/').pop()!;
    });
    await step('Message', 'the status to go on by itself to READ (polling), and the timeline to show every step', async () => {
      await page.locator('.timeline li[data-status="READ"]').waitFor();
      for (const status of ['QUEUED', 'SENT', 'DELIVERED', 'READ']) {
        assert.equal(await page.locator(`.timeline li[data-status="${status}"]`).count(), 1, `one ${status} entry`);
      }
      assert.equal(await page.locator('.facts .badge').first().textContent(), 'READ');
      assert.equal(await page.locator('.bubble .bubble-body').textContent(), 'Hello Bia, your order #2002 has shipped.');
      // The receiver is down, so each event's delivery shows a failed attempt with its status code.
      await page.locator('.timeline li[data-status="SENT"] .attempts').getByText('HTTP 400').waitFor();
      await shoot('message');
    });
    await step('Messages', 'the list to show the message as READ, and the status filter to find it', async () => {
      await page.getByRole('link', { name: '← Messages' }).click();
      await page.locator('td[data-status="READ"]').first().waitFor();
      await page.getByLabel('Status').selectOption('READ');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/status=READ/);
      await page.getByRole('link', { name: state.messageId! }).waitFor();
      await shoot('messages');
    });
  });

  it('retries a failed webhook delivery, which then reaches the receiver', async () => {
    let deliveryId = '';
    await step('Deliveries', 'the message.sent delivery to be listed with its failed attempt', async () => {
      await nav('Deliveries');
      const deliveries = (await api('GET', `/v1/webhook-deliveries?messageId=${state.messageId}`)).body as { id: string; event: string }[];
      deliveryId = deliveries.find((delivery) => delivery.event === 'message.sent')!.id;
      await page.locator(`tr[data-delivery="${deliveryId}"]`).getByText('HTTP 400').waitFor();
    });
    await step('Deliveries', 'Retry to send the delivery again and the row to turn succeeded', async () => {
      receiverUp = true;
      await page.locator(`tr[data-delivery="${deliveryId}"]`).getByRole('button', { name: 'Retry' }).click();
      await page.locator(`tr[data-delivery="${deliveryId}"] td[data-status="succeeded"]`).waitFor();
      const arrivals = receiver.arrivalsFor(deliveryId);
      assert.ok(arrivals.length >= 2, `the receiver saw ${arrivals.length} attempts of ${deliveryId}`);
      assert.equal(arrivals.at(-1)!.answeredWith, 204);
      await shoot('deliveries');
    });
  });

  it('creates an API key shown once, and revokes it', async () => {
    let created = '';
    await step('API keys', 'a new key to be shown once and to work', async () => {
      await nav('API keys');
      await page.getByLabel('Name').fill('ci');
      await page.getByRole('button', { name: 'Create key' }).click();
      created = (await page.locator('#new-key').textContent())!.trim();
      assert.match(created, /^svc_live_/);
      assert.equal((await api('GET', '/v1/projects/me', undefined, created)).status, 200);
      await page.locator('tr[data-key="ci"]').waitFor();
    });
    await step('API keys', 'Revoke (after confirming) to remove the key, which then gets 401', async () => {
      await page.getByRole('button', { name: 'Revoke ci' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
      await page.locator('tr[data-key="ci"]').waitFor({ state: 'detached' });
      assert.equal((await api('GET', '/v1/projects/me', undefined, created)).status, 401);
      await shoot('keys');
    });
    await step('API keys', 'the only key left to be refused revocation (409) with the reason shown', async () => {
      await page.getByRole('button', { name: 'Revoke default' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('status').getByText('only active key').waitFor();
      assert.equal((await api('GET', '/v1/projects/me')).status, 200);
    });
  });

  it('shows a batch with its progress, the webhook endpoints page and the analytics chart', async () => {
    const batch = await api('POST', '/v1/messages/batch', {
      template: 'order_update',
      language: 'en_US',
      items: [
        { to: '+5511987650001', variables: { '1': 'Ana', '2': 'A-1' }, headerVariables: { '1': 'A-1' } },
        { to: '+5511987650002', variables: { '1': 'Bia', '2': 'A-2' }, headerVariables: { '1': 'A-2' } },
      ],
    });
    assert.equal(batch.status, 202, batch.text);
    assert.equal(batch.body.acceptedCount, 2, batch.text);
    const batchId: string = batch.body.batchId;
    await until('the batch\'s messages to be read', async () => {
      const messages = await api('GET', `/v1/messages?batchId=${batchId}`);
      return messages.body.length === 2 && messages.body.every((message: { status: string }) => message.status === 'READ');
    });
    await step('Batches', 'the batch listed with a progress bar that reaches 2 of 2', async () => {
      await nav('Batches');
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.locator(`main progress[aria-label^="${batchId}: 2 of 2"]`).waitFor();
      await shoot('batches');
    });
    await step('Webhooks', 'the form to add an endpoint', async () => {
      await nav('Webhooks');
      await page.locator('main form[aria-label="Add an endpoint"]').waitFor();
      await shoot('webhooks-empty');
    });
    await step('Analytics', 'the chart to count the messages sent, delivered and read today', async () => {
      await nav('Analytics');
      await page.locator('svg.chart').waitFor();
      assert.equal(await page.locator('svg.chart polyline').count(), 4, 'a line for sent, delivered, read and failed');
      // The message sent earlier and the batch's two, all read by the sandbox by now.
      const counted = (await page.locator('svg.chart').getAttribute('aria-label'))!;
      for (const series of ['Sent 3', 'Delivered 3', 'Read 3', 'Failed 0']) assert.ok(counted.includes(series), `"${series}" in "${counted}"`);
      await shoot('analytics');
    });
  });

  it('adds a webhook endpoint, sends it a test event and deletes it', async () => {
    await nav('Webhooks');
    await page.locator('main form[aria-label="Add an endpoint"]').waitFor();
    const url = `${receiver.url}/endpoint`;
    await step('Webhooks', 'a new endpoint to be listed', async () => {
      await page.getByLabel('URL', { exact: true }).fill(url);
      await page.getByLabel('Description').fill('browser test');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.locator('main table').getByText(url).waitFor();
    });
    await step('Webhooks', '"Send test event" to reach the endpoint', async () => {
      await page.getByRole('button', { name: 'Send test event' }).click();
      await page.getByRole('status').getByText('Test event sent').waitFor();
      await receiver.waitFor((arrivals) => arrivals.some((arrival) => arrival.path === '/hooks/endpoint' && arrival.body.includes('webhook.test')));
      await shoot('webhooks');
    });
    const stored = async () => {
      const endpoints = (await api('GET', '/v1/webhook-endpoints')).body as { url: string; allEvents: boolean; events: string[] }[];
      return endpoints.find((endpoint) => endpoint.url === url)!;
    };
    const allCell = () => page.locator('main table td').getByText('all events', { exact: true }).waitFor();
    const saved = () => page.locator('main form[aria-label^="Edit endpoint"]').waitFor({ state: 'detached' });
    await step('Webhooks', 'an endpoint added with every box ticked to be stored as all events', async () => {
      assert.equal((await stored()).allEvents, true);
      await allCell();
    });
    await step('Webhooks', 'Edit → Save unchanged to keep all events (template ones and later ones too)', async () => {
      await page.getByRole('button', { name: 'Edit' }).click();
      const form = page.locator('main form[aria-label^="Edit endpoint"]');
      assert.equal(await form.getByLabel('All events, including ones added later').isChecked(), true);
      await form.getByRole('button', { name: 'Save' }).click();
      await saved();
      await allCell();
      assert.equal((await stored()).allEvents, true, 'still all events after an unchanged save');
    });
    await step('Webhooks', 'Edit to a chosen list, then back to all events', async () => {
      await page.getByRole('button', { name: 'Edit' }).click();
      let form = page.locator('main form[aria-label^="Edit endpoint"]');
      await form.getByLabel('All events, including ones added later').uncheck();
      for (const event of ['message.sent', 'message.delivered', 'message.read', 'message.canceled']) await form.getByLabel(event, { exact: true }).uncheck();
      await form.getByRole('button', { name: 'Save' }).click();
      await saved();
      await page.locator('main table').getByText('message.failed, template.approved').waitFor();
      const chosen = await stored();
      assert.equal(chosen.allEvents, false);
      assert.ok(chosen.events.includes('message.failed') && !chosen.events.includes('message.sent'), chosen.events.join());
      await page.getByRole('button', { name: 'Edit' }).click();
      form = page.locator('main form[aria-label^="Edit endpoint"]');
      await form.getByLabel('All events, including ones added later').check();
      await form.getByRole('button', { name: 'Save' }).click();
      await saved();
      await allCell();
      assert.equal((await stored()).allEvents, true);
    });
    await step('Webhooks', 'a field error to read as words, not a JSON pointer', async () => {
      const form = page.locator('main form[aria-label="Add an endpoint"]');
      // Longer than the schema's 2,048 characters: the API names the field by pointer ("/url must…").
      await form.getByLabel('URL', { exact: true }).fill(`https://example.com/${'a'.repeat(2100)}`);
      await form.getByRole('button', { name: 'Add endpoint' }).click();
      const alert = form.getByRole('alert');
      await alert.waitFor();
      const text = (await alert.textContent())!;
      assert.doesNotMatch(text, /(^|\s)\/url\b/, text);
      assert.match(text, /“url”/, text);
      await form.getByLabel('URL', { exact: true }).fill('');
    });
    await step('Webhooks', 'Delete (after confirming) to remove the endpoint', async () => {
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
      await page.locator('main table').getByText(url).waitFor({ state: 'detached' });
    });
  });

  it('reveals, copies and rotates the webhook signing secret', async () => {
    await nav('Webhooks');
    const card = page.locator('main section[aria-labelledby="signing-secret-heading"]');
    const secretOf = async () => ((await api('GET', '/v1/projects/me/webhook-secret')).body as { secret: string }).secret;
    await step('Webhooks', 'the secret hidden until Reveal, then the project’s whsec_ secret', async () => {
      await card.waitFor();
      assert.doesNotMatch((await card.locator('#signing-secret').textContent())!, /whsec_[A-Za-z0-9+/]{8}/);
      await card.getByRole('button', { name: 'Reveal' }).click();
      await card.getByText(await secretOf()).waitFor();
      await shoot('webhooks-secret');
    });
    await step('Webhooks', 'Copy to put the secret on the clipboard', async () => {
      await card.getByRole('button', { name: 'Copy' }).click();
      await page.getByRole('status').getByText('Copied to the clipboard.').waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), await secretOf());
    });
    await step('Webhooks', 'Rotate (after confirming) to show the new secret and when the old one stops', async () => {
      const before = await secretOf();
      await card.getByRole('button', { name: 'Rotate' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
      await card.getByText('The previous secret still signs too').waitFor();
      const after = await secretOf();
      assert.notEqual(after, before);
      assert.equal((await card.locator('#signing-secret').textContent())!.trim(), after);
    });
  });

  it('is usable at phone width: nothing wider than the screen but the tables’ own scroll', async () => {
    await step('Messages', 'no horizontal scrolling of the page at 390 px', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await nav('Messages');
      await page.locator('td[data-status]').first().waitFor();
      assert.ok(Number(await page.evaluate('document.documentElement.scrollWidth')) <= 390);
      await shoot('messages-phone');
      await page.setViewportSize({ width: 1280, height: 800 });
    });
  });

  it('fits a 360 px phone on every list page: no page scrolling sideways, every button on screen', async () => {
    // An endpoint with a long URL, so that the webhooks table has something wide to hold.
    const endpoint = await api('POST', '/v1/webhook-endpoints', { url: `${receiver.url}/a-rather-long-path/for/a/narrow/screen/${'x'.repeat(60)}` });
    assert.equal(endpoint.status, 201, endpoint.text);
    await page.setViewportSize({ width: 360, height: 780 });
    try {
      for (const [label, ready] of [
        ['Messages', 'td[data-status]'],
        ['Webhooks', 'main table td'],
        ['Deliveries', 'main table td'],
        ['API keys', 'main table td'],
        ['Templates', 'main table td'],
        ['Batches', 'main table td'],
      ] as const) {
        await step(label, 'nothing wider than 360 px, and each button within the screen', async () => {
          await nav(label);
          await page.locator(ready).first().waitFor();
          assert.ok(Number(await page.evaluate('document.documentElement.scrollWidth')) <= 360, 'the page scrolls sideways');
          for (const button of await page.locator('main button').all()) {
            if (!(await button.isVisible())) continue;
            const box = (await button.boundingBox())!;
            assert.ok(box.x >= 0 && box.x + box.width <= 360, `"${await button.textContent()}" is off-screen (x ${box.x}, width ${box.width})`);
          }
          await shoot(`phone-${label.toLowerCase().replace(/\W+/g, '-')}`);
        });
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
      await api('DELETE', `/v1/webhook-endpoints/${endpoint.body.id}`);
    }
  });

  it('signs out, forgetting the key, and a revoked key in a tab signs that tab out', async () => {
    await step('Messages', 'Sign out to clear session storage and show the sign-in form', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      assert.equal(await page.evaluate('sessionStorage.length'), 0);
    });
    await step('sign-in', 'a key revoked elsewhere to sign the console out on its next request', async () => {
      const other = (await api('POST', '/v1/api-keys', { name: 'tab' })).body as { id: string; key: string };
      await page.getByLabel('API key').fill(other.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Messages', level: 1 }).waitFor();
      await api('DELETE', `/v1/api-keys/${other.id}`);
      await page.getByText('The API key is no longer valid').waitFor();
      assert.equal(await page.evaluate('sessionStorage.length'), 0);
    });
  });

  it('fetched nothing from another origin and threw no error', () => {
    assert.deepEqual(offOrigin, [], 'requests to other origins (fonts, CDNs, analytics)');
    assert.deepEqual(pageErrors, [], 'errors in the page (scripts, CSP violations)');
  });
});
