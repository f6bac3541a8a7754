import type { FastifyReply, FastifyRequest } from 'fastify';

// A client that streams a body over the limit is still sending when its 413 is ready. Closing the
// connection then (Fastify's `Connection: close`) makes the kernel reset it while bytes arrive,
// and a client that writes its whole body before reading (Node's fetch) gets EPIPE or ECONNRESET
// instead of the answer. So the rest of the body is read and thrown away, up to a bound, on a
// connection kept open: the client finishes writing, then reads its 413. A body larger still is
// cut off at the bound (and every body by the request timeout, SVC_HTTP_REQUEST_TIMEOUT_MS).

/** How much of a refused body is read and dropped, beyond what was read before the refusal. */
export const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

export function drainTooLargeBody(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  if (raw.complete || raw.destroyed) return;
  reply.removeHeader('connection');
  let left = DRAIN_LIMIT_BYTES;
  const drop = (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) {
      raw.off('data', drop);
      raw.socket.destroy();
    }
  };
  raw.on('data', drop);
  raw.resume();
}
