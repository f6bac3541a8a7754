import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';

// /docs (Scalar) is served from this server alone: no fonts, scripts or anything else from outside.

const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';

describe('GET /docs', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(async () => {
    await server.close();
  });

  test('serves the reference page and its script from this server, with default fonts off', async () => {
    const redirect = await fetch(`${server.url}/docs`, { redirect: 'manual' });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), '/docs/');
    const page = await fetch(`${server.url}/docs/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.ok(page.headers.get('x-request-id'));
    const html = await page.text();
    assert.doesNotMatch(html, /(src|href)\s*=\s*["']?(https?:)?\/\//i, 'the page loads nothing from another origin');
    assert.match(html, /"withDefaultFonts":\s*false/);
    const script = await fetch(`${server.url}/docs/js/scalar.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);
    assert.ok((await script.arrayBuffer()).byteLength > 100_000);
    assert.equal((await fetch(`${server.url}/docs/nothing-here`)).status, 404);
  });

  test('names its script with Scalar’s version, serves it gzipped and cached, and has a favicon', async () => {
    const html = await (await fetch(`${server.url}/docs/`)).text();
    const src = /<script[^>]+src="([^"]*scalar\.js\?v=[^"]+)"/.exec(html)?.[1];
    assert.ok(src, 'the script is named with a version');
    const favicon = /"favicon":\s*"([^"]+)"/.exec(html)?.[1];
    assert.equal((await fetch(`${server.url}${favicon}`)).status, 200, 'the favicon is served (no /favicon.ico 404)');
    const url = new URL(src, `${server.url}/docs/`).href;
    const zipped = await fetch(url, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers.get('content-encoding'), 'gzip');
    assert.match(zipped.headers.get('cache-control') ?? '', /max-age=31536000, immutable/);
    const etag = zipped.headers.get('etag')!;
    assert.ok(etag);
    const plain = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.equal(Buffer.from(await plain.arrayBuffer()).toString('utf8'), Buffer.from(await zipped.arrayBuffer()).toString('utf8'));
    assert.equal((await fetch(url, { headers: { 'if-none-match': etag } })).status, 304);
  });

  test('in a browser, the page fetches nothing outside this server', { skip: existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}` }, async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM });
    try {
      const page = await browser.newPage();
      const outside: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) outside.push(request.url());
      });
      await page.route((url) => !url.href.startsWith(server.url) && url.protocol !== 'data:', (route) => route.abort());
      await page.goto(`${server.url}/docs/`);
      await page.getByText('Create a project').first().waitFor({ timeout: 15_000 });
      await page.waitForLoadState('networkidle');
      assert.deepEqual(outside, []);
    } finally {
      await browser.close();
    }
  });
});
