import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorOf } from '../errors.ts';

// The web console (console/): a single-page app, static files only, bundled by esbuild in memory
// on the first request and kept for the life of the process. No build step, and no start-up
// cost for a process nobody opens the console on. Deep links (/console/…) answer the app's page.

const CONSOLE_DIR = fileURLToPath(new URL('../../../console/', import.meta.url));

/** Only this origin's own files and API: no inline script or style, no other host, no framing. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(body: Buffer | string, type: string): Asset {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return { body: bytes, type, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"` };
}

async function buildConsole(): Promise<Map<string, Asset>> {
  // Imported here so a process that never serves the console never loads esbuild.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { app: `${CONSOLE_DIR}src/main.ts` },
    bundle: true,
    write: false,
    outdir: '/',
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    const type = name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
    assets.set(name, asset(Buffer.from(file.contents), type));
  }
  assets.set('icon.svg', asset(await readFile(`${CONSOLE_DIR}icon.svg`), 'image/svg+xml'));
  assets.set('index.html', asset(await readFile(`${CONSOLE_DIR}index.html`), 'text/html; charset=utf-8'));
  return assets;
}

// One bundle per process, shared by every server in it; a failed build is tried again next time.
let bundle: Promise<Map<string, Asset>> | undefined;

function consoleAssets(): Promise<Map<string, Asset>> {
  bundle ??= buildConsole().catch((error: unknown) => {
    bundle = undefined;
    throw error;
  });
  return bundle;
}

function sendAsset(request: FastifyRequest, reply: FastifyReply, file: Asset): FastifyReply {
  reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    // Revalidated every time (cheap: a 304), so a new version is never hidden behind a cache.
    .header('cache-control', 'no-cache')
    .header('etag', file.etag);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.type(file.type).send(file.body);
}

export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const hidden = { schema: { hide: true } };

  app.get('/', hidden, async (_request, reply) => reply.redirect('/console', 302));

  app.get('/console', hidden, async (request, reply) => {
    return sendAsset(request, reply, (await consoleAssets()).get('index.html')!);
  });

  app.get<{ Params: { '*': string } }>('/console/*', hidden, async (request, reply) => {
    const path = request.params['*'];
    const assets = await consoleAssets();
    if (path.startsWith('assets/')) {
      const file = assets.get(path.slice('assets/'.length));
      if (!file || file.type.startsWith('text/html')) {
        throw errorOf('console_file_not_found', { path });
      }
      return sendAsset(request, reply, file);
    }
    // Any other path is a page of the app, which routes it in the browser.
    return sendAsset(request, reply, assets.get('index.html')!);
  });
}
