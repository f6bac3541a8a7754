import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.ts';

// How the API process serves the console: static files only, one strict CSP, deep links to the
// app, nothing for other paths. (What the app does is test/browser/console.test.ts.)

describe('serving the console', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(() => server.close());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(server.url + path, { headers, redirect: 'manual' });

  it('/console is the app page, with a CSP that allows only this origin and no inline code', async () => {
    const response = await get('/console');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^text\/html/);
    const csp = response.headers.get('content-security-policy')!;
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /style-src 'self'(;|$)/);
    assert.match(csp, /connect-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe|https?:|\*/, 'no inline code, no other host');
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const html = await response.text();
    assert.match(html, /<script type="module" src="\/console\/assets\/app.js"><\/script>/);
    assert.doesNotMatch(html, /<script>|<style|style=|https?:\/\//, 'the page has no inline script or style and names no other host');
  });

  it('deep links answer the same page, so a bookmark of any console page works', async () => {
    const page = await (await get('/console')).text();
    for (const path of ['/console/', '/console/messages', '/console/messages/msg_01jd2k3m4n5p6q7r8s9t0v1w2x', '/console/keys?x=1']) {
      const response = await get(path);
      assert.equal(response.status, 200, path);
      assert.equal(await response.text(), page, path);
    }
  });

  it('the bundle and its stylesheet are served, cached by ETag, with no outside URL in them', async () => {
    for (const [path, type] of [
      ['/console/assets/app.js', /^text\/javascript/],
      ['/console/assets/app.css', /^text\/css/],
      ['/console/assets/icon.svg', /^image\/svg\+xml/],
    ] as const) {
      const response = await get(path);
      assert.equal(response.status, 200, path);
      assert.match(response.headers.get('content-type')!, type, path);
      assert.ok(response.headers.get('content-security-policy'), path);
      const body = await response.text();
      // No font, CDN or analytics host: the only URLs are the SVG namespace and reserved example
      // names (placeholders, RFC 2606). The browser test checks every request the app makes.
      const hosts = [...body.matchAll(/https?:\/\/([a-z0-9.-]+)/gi)]
        .map((match) => match[1]!)
        .filter((host) => host !== 'www.w3.org' && host !== 'example.com' && !host.endsWith('.invalid'));
      assert.deepEqual(hosts, [], `${path} names another host`);
      const again = await get(path, { 'if-none-match': response.headers.get('etag')! });
      assert.equal(again.status, 304, path);
    }
  });

  it('an unknown asset is a 404 problem, not the app page', async () => {
    for (const path of ['/console/assets/nope.js', '/console/assets/index.html', '/console/assets/../../package.json']) {
      const response = await get(path);
      assert.equal(response.status, 404, path);
      assert.equal(response.headers.get('content-type'), 'application/problem+json', path);
    }
  });

  it('/ leads to the console; other unknown paths stay 404, and the console is not an API operation', async () => {
    const root = await get('/');
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/console');
    assert.equal((await get('/dashboard')).status, 404);
    assert.equal((await get('/consoles')).status, 404);
    const post = await fetch(`${server.url}/console`, { method: 'POST' });
    assert.equal(post.status, 405);
    const openapi = (await (await get('/openapi.json')).json()) as { paths: Record<string, unknown> };
    assert.deepEqual(Object.keys(openapi.paths).filter((path) => path === '/' || path.startsWith('/console')), []);
  });
});
