// Anchor for the reads scenario: bare Fastify (the version svc uses) answering GET with fixed JSON
// bodies captured from svc in the same session (ANCHOR_BODIES: {"/path": "<json>", …}), nothing
// else: what serving those bytes over HTTP costs here.
// Usage: node bench/anchors/bareJson.ts
import Fastify from 'fastify';

const bodies = JSON.parse(process.env.ANCHOR_BODIES ?? '{}') as Record<string, string>;
const app = Fastify({ logger: false });
for (const [path, body] of Object.entries(bodies)) {
  app.get(path, async (_request, reply) => reply.type('application/json; charset=utf-8').send(body));
}
const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`anchor listening ${url}`);
const close = () => void app.close().then(() => process.exit(0));
process.on('SIGTERM', close);
process.on('SIGINT', close);
