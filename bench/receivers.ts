// Webhook receivers in their own process, each on its own port (its own origin): fast (204 at
// once), slow (204 after a delay) and failing (500 at once). Every request is recorded: receiver,
// arrival time, webhook-id, and the payload's event and occurred_at.
// Usage: node bench/receivers.ts '[{"name":"fast","kind":"fast"},{"name":"slow1","kind":"slow","delayMs":9000}]'
// Prints "receivers listening {name: url}" and the control URL; GET <control>/_stats returns
// { records: [name, arrivedAt, webhookId, event, occurredAtMs][] }, GET <control>/_counts the
// distinct webhook-ids received per receiver; message events only.
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';

interface ReceiverSpec {
  name: string;
  kind: 'fast' | 'slow' | 'failing';
  delayMs?: number;
}

type Arrival = [name: string, arrivedAt: number, webhookId: string, event: string, occurredAt: number];

const specs = JSON.parse(process.argv[2] ?? '[]') as ReceiverSpec[];
const records: Arrival[] = [];
/** Distinct webhook-ids per receiver: what the harness polls (cheap) while it waits. */
const distinct = new Map<string, Set<string>>();

function listen(server: Server): Promise<string> {
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 0;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`)),
  );
}

function receiver(spec: ReceiverSpec) {
  return (request: IncomingMessage, response: ServerResponse) => {
    const arrivedAt = Date.now();
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      let event = '';
      let occurredAt = Number.NaN;
      try {
        const payload = JSON.parse(body) as { event?: string; occurred_at?: string };
        event = payload.event ?? '';
        occurredAt = Date.parse(payload.occurred_at ?? '');
      } catch {
        // recorded with what is known
      }
      const webhookId = String(request.headers['webhook-id'] ?? '');
      // Message events only: the scenarios count those (a template's approval is an event too).
      if (event.startsWith('message.')) {
        records.push([spec.name, arrivedAt, webhookId, event, occurredAt]);
        let ids = distinct.get(spec.name);
        if (!ids) distinct.set(spec.name, (ids = new Set()));
        ids.add(webhookId);
      }
      if (spec.kind === 'failing') response.writeHead(500).end('failing on purpose');
      else if (spec.kind === 'slow') setTimeout(() => response.writeHead(204).end(), spec.delayMs ?? 9000);
      else response.writeHead(204).end();
    });
  };
}

const urls: { [name: string]: string } = {};
for (const spec of specs) urls[spec.name] = `${await listen(createServer(receiver(spec)))}/hook`;
const control = await listen(
  createServer((request, response) => {
    if (request.url === '/_counts') {
      const counts = Object.fromEntries([...distinct].map(([name, ids]) => [name, ids.size]));
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
    } else if (request.url?.startsWith('/_stats')) {
      const text = JSON.stringify({ records });
      response.writeHead(200, { 'content-type': 'application/json' }).end(text);
    } else response.writeHead(404).end();
  }),
);
console.log(`receivers listening ${JSON.stringify({ control, urls })}`);
process.on('SIGTERM', () => process.exit(0));
