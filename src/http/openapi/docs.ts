import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorOf } from '../errors.ts';
import { renderReference } from './reference/page.ts';

// GET /docs: the API reference, one HTML page rendered here from the served OpenAPI document
// (reference/page.ts), with a small stylesheet and script of its own. The page is rendered on
// its first request and kept (the document does not change while the process runs); each file is
// gzipped once and served with an ETag. Nothing is loaded from another origin. The stylesheet and
// script are named by their content's hash and cached for a year; the page is revalidated.

const PREFIX = '/docs';
const FAVICON = '/console/assets/icon.svg';

interface Asset {
  body: Buffer;
  gzipped: Buffer;
  etag: string;
  type: string;
  cache: string;
}

const hashOf = (body: Buffer) => createHash('sha256').update(body).digest('base64url').slice(0, 22);

function asset(body: Buffer, type: string, cache: string): Asset {
  return { body, gzipped: gzipSync(body), etag: `"${hashOf(body)}"`, type, cache };
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
const css = asset(readFileSync(new URL('reference/style.css', import.meta.url)), 'text/css; charset=utf-8', IMMUTABLE);
const js = asset(readFileSync(new URL('reference/client.js', import.meta.url)), 'application/javascript; charset=utf-8', IMMUTABLE);
const FILES: Record<string, Asset> = { 'reference.css': css, 'reference.js': js };

function renderPage(app: FastifyInstance): Asset {
  return asset(
    Buffer.from(
      renderReference(app.swagger() as unknown as Record<string, unknown>, {
        css: `${PREFIX}/reference.css?v=${css.etag.slice(1, 13)}`,
        js: `${PREFIX}/reference.js?v=${js.etag.slice(1, 13)}`,
        favicon: FAVICON,
      }),
    ),
    'text/html; charset=utf-8',
    'no-cache',
  );
}

function send(request: FastifyRequest, reply: FastifyReply, file: Asset): FastifyReply {
  reply.header('content-type', file.type).header('cache-control', file.cache).header('etag', file.etag).header('vary', 'accept-encoding');
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  if (!/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.send(file.body);
  return reply.header('content-encoding', 'gzip').send(file.gzipped);
}

export function registerDocs(app: FastifyInstance): void {
  // Kept per server: each one's document differs with its provider (a test process runs several).
  let page: Asset | undefined;
  app.get(PREFIX, { schema: { hide: true } }, async (_request, reply) => reply.redirect(`${PREFIX}/`, 301));
  app.get(`${PREFIX}/*`, { schema: { hide: true } }, async (request, reply) => {
    const name = (request.params as { '*': string })['*'];
    const file = name === '' ? (page ??= renderPage(app)) : FILES[name];
    if (file === undefined) throw errorOf('route_not_found', { method: request.method, path: request.url.split('?')[0]! });
    return send(request, reply, file);
  });
}
