// Anchor: bare Fastify answering 202 with svc's reply body and doing nothing else: the floor of
// what an HTTP service costs here.
import { serveMessages } from './messageRoute.ts';

await serveMessages(() => {});
