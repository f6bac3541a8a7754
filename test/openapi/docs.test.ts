import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { OPERATION_EXAMPLES } from '../../src/http/openapi/examples.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// GET /docs: the API reference, rendered by svc from its own OpenAPI document (no third-party
// viewer): every operation under its id with its summary, examples for every status it has one
// for, curl / SDK / CLI samples, the webhook events; its stylesheet and script from this server,
// gzipped, cached and revalidated by ETag, within a byte budget.

type Json = Record<string, any>;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('GET /docs', () => {
  let server: TestServer;
  let document: Json;
  let html: string;
  before(async () => {
    server = await startTestServer('sqlite');
    document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;
    html = await (await fetch(`${server.url}/docs/`)).text();
  });
  after(async () => {
    await server.close();
  });

  /** The HTML of one operation's section. */
  const section = (id: string) => {
    const start = html.indexOf(`<section class="operation" id="${id}"`);
    assert.ok(start >= 0, `a section for ${id}`);
    return html.slice(start, html.indexOf('</section>', start));
  };

  test('redirects /docs to /docs/ and serves one HTML page that loads nothing from another origin', async () => {
    const redirect = await fetch(`${server.url}/docs`, { redirect: 'manual' });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), '/docs/');
    const page = await fetch(`${server.url}/docs/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.ok(page.headers.get('x-request-id'));
    const loads = [...html.matchAll(/<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    assert.ok(loads.length >= 3, 'its stylesheet, script and icon');
    for (const url of loads) assert.match(url, /^\/[^/]/, `${url} is on this server`);
    assert.doesNotMatch(html, /scalar/i);
    assert.equal((await fetch(`${server.url}/docs/nothing-here`)).status, 404);
  });

  test('titles every operation with its summary, under its operationId, grouped by tag', () => {
    for (const item of Object.values<Json>(document.paths)) {
      for (const operation of Object.values<Json>(item)) {
        assert.match(section(operation.operationId), new RegExp(`<h3 [^>]*><a href="#${operation.operationId}">${escapeRegExp(operation.summary)}</a></h3>`));
      }
    }
    for (const tag of document.tags) assert.ok(html.includes(`<h2>${tag.name.replace(/&/g, '&amp;')}</h2>`), `tag ${tag.name}`);
  });

  test('shows the example of every status examples.ts gives, and curl, SDK and CLI samples', () => {
    for (const [id, examples] of Object.entries(OPERATION_EXAMPLES)) {
      if (!html.includes(`id="${id}"`)) continue; // an example of an operation another server role serves
      for (const status of Object.keys(examples.responses ?? {})) assert.ok(section(id).includes(`data-panel="${status}"`), `${id} ${status}`);
    }
    const send = section('sendMessage');
    assert.match(send, /data-panel="curl"[^>]*><pre><code>curl -X POST <span data-base>http:\/\/127\.0\.0\.1:8080<\/span>\/v1\/messages/);
    assert.match(send, /Authorization: Bearer <span data-key>svc_live_YOUR_API_KEY<\/span>/);
    assert.match(send, /data-panel="sdk"[\s\S]*svc\.POST\(&#39;\/v1\/messages&#39;/);
    assert.match(send, /data-panel="cli"[\s\S]*svc send --to \+5511987654321 --template order_update/);
    assert.ok(send.includes((OPERATION_EXAMPLES.sendMessage!.responses!['202'] as { id: string }).id));
    assert.match(send, /<form class="try-form" data-method="POST" data-path="\/v1\/messages" data-auth="true">/);
    for (const name of Object.keys(document.webhooks)) assert.ok(html.includes(`<code>${name}</code>`), `webhook ${name}`);
    for (const name of Object.keys(document.components.schemas)) assert.ok(html.includes(`id="schema-${name}"`), `schema ${name}`);
  });

  test('serves the page, stylesheet and script gzipped with ETags, within a byte budget', async () => {
    const links = [...html.matchAll(/(?:src|href)="(\/docs\/reference\.(?:css|js)\?v=[^"]+)"/g)].map((match) => match[1]!);
    assert.equal(links.length, 2);
    for (const [url, cache] of [['/docs/', /no-cache/], ...links.map((link) => [link, /max-age=31536000, immutable/] as const)] as const) {
      const zipped = await fetch(`${server.url}${url}`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(zipped.status, 200);
      assert.equal(zipped.headers.get('content-encoding'), 'gzip', url);
      assert.match(zipped.headers.get('cache-control') ?? '', cache);
      const etag = zipped.headers.get('etag')!;
      assert.ok(etag, url);
      assert.equal((await fetch(`${server.url}${url}`, { headers: { 'if-none-match': etag } })).status, 304, url);
      const plain = await fetch(`${server.url}${url}`, { headers: { 'accept-encoding': 'identity' } });
      assert.equal(plain.headers.get('content-encoding'), null);
    }
    // What a first visit transfers (the page gzipped): a small fraction of the 1 MiB Scalar sent.
    assert.ok(gzipSync(html).byteLength < 150_000, `the page is ${gzipSync(html).byteLength} bytes gzipped`);
  });
});
