import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';

// GET /docs: the API reference (Scalar) over /openapi.json. Scalar's module holds its whole
// browser bundle in memory (~22 MiB of RSS), so it is loaded on the first request for the page,
// in a Fastify instance of its own that never listens; the API forwards /docs requests to it.
// The page loads nothing from outside: its script comes from /docs/js/scalar.js, and Scalar's
// default fonts (fetched from fonts.scalar.com) are off, so the browser's own fonts are used.

const PREFIX = '/docs';

let reference: Promise<FastifyInstance> | undefined;

async function loadReference(): Promise<FastifyInstance> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const docs = Fastify({ routerOptions: { ignoreTrailingSlash: false } });
  await docs.register(scalar, {
    routePrefix: PREFIX,
    configuration: {
      url: '/openapi.json',
      title: 'svc API',
      withDefaultFonts: false,
      // Nothing that calls Scalar's services (the hosted client, the agent, MCP).
      hideClientButton: true,
      agent: { disabled: true },
      mcp: { disabled: true },
    },
  });
  await docs.ready();
  return docs;
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
