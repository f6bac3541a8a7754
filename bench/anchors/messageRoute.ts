// What every accept anchor shares: Fastify (the version svc uses) with POST /v1/messages answering
// 202 with svc's own reply body (passed in ANCHOR_REPLY), after `store` has kept the request.
import Fastify from 'fastify';

export async function serveMessages(store: (body: unknown) => Promise<void> | void): Promise<void> {
  const reply = process.env.ANCHOR_REPLY ?? '{"status":"QUEUED"}';
  const app = Fastify({ logger: false });
  app.post('/v1/messages', async (request, response) => {
    await store(request.body);
    return response.code(202).type('application/json; charset=utf-8').send(reply);
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  console.log(`anchor listening ${url}`);
  const close = () => void app.close().then(() => process.exit(0));
  process.on('SIGTERM', close);
  process.on('SIGINT', close);
}
