import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

// A real webhook receiver for tests: a node:http server on 127.0.0.1 that records every request,
// checks its signature with the standardwebhooks library against every secret it is told, and
// answers as the test programs it (fail N times, hang, redirect, 2xx…).

export interface Arrival {
  /** performance.now() when the request was complete. */
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as received. */
  body: string;
  deliveryId: string;
  attempt: number;
  /** For each secret the receiver knows: did the signature verify with it? */
  verified: boolean[];
  /** The answer the receiver gave (undefined while hanging, or when it never answered). */
  answeredWith?: number;
  /** performance.now() when that answer was sent. */
  answeredAt?: number;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (until the receiver closes). */
  hang?: boolean;
  /** Answer after this long. */
  delayMs?: number;
}

/** Decides the answer to an arrival; `nth` counts this delivery id's arrivals from 1. */
export type Responder = (arrival: Arrival, nth: number) => Answer;

export const ok: Responder = () => ({ status: 200, body: 'ok' });

export function failTimes(n: number, status = 500): Responder {
  return (_arrival, nth) => (nth <= n ? { status, body: `fail ${nth}` } : { status: 204 });
}

export const hang: Responder = () => ({ hang: true });

export function redirectTo(location: string, status = 302): Responder {
  return () => ({ status, headers: { location } });
}

export interface WebhookReceiver {
  readonly url: string;
  readonly arrivals: Arrival[];
  /** TCP connections accepted so far (a refused delivery must leave this untouched). */
  readonly connections: number;
  /** The most requests this receiver held unanswered at one time (`hang`): a high-water mark. */
  readonly mostHanging: number;
  /** The secrets every signature is checked against. */
  secrets: string[];
  respond: Responder;
  arrivalsFor(deliveryId: string): Arrival[];
  /** Resolves once `predicate` holds for the arrivals (polls), or rejects after `timeoutMs`. */
  waitFor(predicate: (arrivals: Arrival[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(respond: Responder = ok): Promise<WebhookReceiver> {
  const arrivals: Arrival[] = [];
  const hanging = new Set<ServerResponse>();
  const receiver: WebhookReceiver = {
    url: '',
    arrivals,
    connections: 0,
    mostHanging: 0,
    secrets: [],
    respond,
    arrivalsFor: (deliveryId) => arrivals.filter((arrival) => arrival.deliveryId === deliveryId),
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(arrivals)) {
        if (Date.now() > deadline) {
          throw new Error(`receiver: condition not met within ${timeoutMs} ms (${arrivals.length} arrivals)`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = request.headers;
      const deliveryId = String(headers['x-service-delivery'] ?? '');
      const arrival: Arrival = {
        at: performance.now(),
        method: request.method ?? '',
        path: request.url ?? '',
        headers,
        body,
        deliveryId,
        attempt: Number(headers['x-service-delivery-attempt']),
        verified: receiver.secrets.map((secret) => {
          try {
            new Webhook(secret).verify(body, headers as Record<string, string>);
            return true;
          } catch {
            return false;
          }
        }),
      };
      arrivals.push(arrival);
      const nth = arrivals.filter((other) => other.deliveryId === deliveryId).length;
      const answer = receiver.respond(arrival, nth);
      if (answer.hang) {
        hanging.add(response);
        (receiver as { mostHanging: number }).mostHanging = Math.max(receiver.mostHanging, hanging.size);
        response.on('close', () => hanging.delete(response));
        return;
      }
      const send = () => {
        if (response.destroyed) return;
        arrival.answeredWith = answer.status ?? 200;
        arrival.answeredAt = performance.now();
        response.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
        response.end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  server.on('connection', () => {
    (receiver as { connections: number }).connections++;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  (receiver as { url: string }).url = `http://127.0.0.1:${port}/hooks`;
  return receiver;
}
