import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';

// GET /docs: the API reference (Scalar) over /openapi.json. Scalar's module holds its whole
// browser bundle in memory (~22 MiB of RSS), so it is loaded on the first request for the page,
// in a Fastify instance of its own that never listens; the API forwards /docs requests to it.
// The page loads nothing from outside: its script comes from /docs/js/scalar.js, and Scalar's
// default fonts (fetched from fonts.scalar.com) are off, so the browser's own fonts are used.
// The script (4 MiB) is named with Scalar's version and served gzipped and cached for a year, so
// a second visit compiles it from the browser's cache; the favicon is the console's icon (the
// browser asks /favicon.ico otherwise, a 404 in its console).

const PREFIX = '/docs';
const SCALAR_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.resolve('@scalar/fastify-api-reference')), 'utf8')) as { version: string }
).version;
const SCRIPT = `js/scalar.js?v=${SCALAR_VERSION}`;
// Scalar's generated clients, by language, all hidden but curl.
const GENERATED_TARGETS = [
  'c', 'clojure', 'csharp', 'dart', 'fsharp', 'go', 'http', 'java', 'js', 'julia', 'kotlin', 'node', 'objc', 'ocaml',
  'php', 'powershell', 'python', 'r', 'ruby', 'rust', 'swift',
] as const;
/** Shown in the page's examples until the reader types a key (never a real one). */
const PLACEHOLDER_API_KEY = 'svc_live_YOUR_API_KEY';

let reference: Promise<FastifyInstance> | undefined;

async function loadReference(): Promise<FastifyInstance> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const docs = Fastify({ routerOptions: { ignoreTrailingSlash: false } });
  await docs.register(scalar, {
    routePrefix: PREFIX,
    configuration: {
      url: '/openapi.json',
      title: 'svc API',
      cdn: SCRIPT,
      favicon: '/console/assets/icon.svg',
      withDefaultFonts: false,
      // Nothing that calls Scalar's services (the hosted client, the agent, MCP), and no
      // toolbar of Scalar's own (Developer Tools, Configure, Share, Deploy).
      hideClientButton: true,
      showDeveloperTools: 'never',
      agent: { disabled: true },
      mcp: { disabled: true },
      // Every operation but POST /v1/projects takes the bearer key: it is selected, with a
      // placeholder in the examples, instead of "No authentication selected".
      authentication: {
        preferredSecurityScheme: 'bearer',
        securitySchemes: { bearer: { token: PLACEHOLDER_API_KEY } },
      },
      // Three ways to make each call, as Stripe shows them: curl (the default), the TypeScript
      // SDK and the CLI (the operation's x-codeSamples); not Scalar's generic HTTP clients in
      // twenty languages, which know nothing of the SDK's retries or idempotency keys.
      defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
      hiddenClients: {
        ...Object.fromEntries(GENERATED_TARGETS.map((target) => [target, true])),
        shell: ['httpie', 'wget'],
      },
    },
  });
  await docs.ready();
  return docs;
}

interface Script {
  body: Buffer;
  gzipped: Buffer;
  etag: string;
}
let script: Script | undefined;

/** Scalar's script, gzipped once (about 4 MiB to 1), with its ETag. */
function scriptOf(body: Buffer): Script {
  script ??= { body, gzipped: gzipSync(body), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
  return script;
}

function sendScript(request: FastifyRequest, reply: FastifyReply, body: Buffer): FastifyReply {
  const { gzipped, etag } = scriptOf(body);
  reply
    .header('content-type', 'application/javascript; charset=utf-8')
    .header('cache-control', 'public, max-age=31536000, immutable')
    .header('etag', etag)
    .header('vary', 'accept-encoding');
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  if (!/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.send(body);
  return reply.header('content-encoding', 'gzip').send(gzipped);
}

async function forward(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reference ??= loadReference().catch((error: unknown) => {
    reference = undefined;
    throw error;
  });
  const answer = await (await reference).inject({
    method: request.method as 'GET' | 'HEAD',
    url: request.url,
    headers: { ...(request.headers['if-none-match'] && { 'if-none-match': request.headers['if-none-match'] }) },
  });
  // Scalar's instance answers in Fastify's default JSON; an unknown page is the API's own 404.
  if (answer.statusCode === 404) {
    throw new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`);
  }
  if (answer.statusCode >= 400) throw new Error(`the API reference answered ${answer.statusCode}`);
  if (request.url.split('?')[0] === `${PREFIX}/js/scalar.js`) return sendScript(request, reply, answer.rawPayload);
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value !== undefined && !['content-length', 'connection', 'transfer-encoding', 'date'].includes(name)) {
      reply.header(name, value);
    }
  }
  return reply.code(answer.statusCode).send(answer.rawPayload);
}

export function registerDocs(app: FastifyInstance): void {
  app.get(PREFIX, { schema: { hide: true } }, forward);
  app.get(`${PREFIX}/*`, { schema: { hide: true } }, forward);
}
