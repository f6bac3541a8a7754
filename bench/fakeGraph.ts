// A fake WhatsApp Graph API in its own process, for pacing benchmarks. It answers message sends
// like Meta (200 with contacts and a wamid) after a set latency, leaves a set fraction of them
// hanging (no answer until the client gives up), records each send's arrival per phone number
// id, and answers the calls svc makes around templates and credentials.
// Usage: node bench/fakeGraph.ts '{"latencyMs":50,"hangFraction":0.01}'
// Stats: GET /_stats → { numbers: { [phoneNumberId]: { arrivals: number[], answered, hung } }, stalls }
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type Stall, watchLoopStalls } from './loopStalls.ts';

interface FakeOptions {
  latencyMs: number;
  hangFraction: number;
}

const options: FakeOptions = { latencyMs: 50, hangFraction: 0, ...JSON.parse(process.argv[2] ?? '{}') };
const WABA_ID = '100000000000001';

const numbers = new Map<string, { arrivals: number[]; answered: number; hung: number }>();
const templates = new Map<string, { id: string; name: string; language: string; category: string; status: string }>();
let templateCount = 0;
// This process's own stalls: an arrival stamped late here is the fake's delay, not svc's.
const stalls: Stall[] = [];
watchLoopStalls((stall) => stalls.push(stall));

function json(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function readBody(request: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      try {
        resolve(text === '' ? {} : JSON.parse(text));
      } catch {
        resolve({});
      }
    });
  });
}

async function sendMessage(phoneNumberId: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const arrivedAt = Date.now();
  let stats = numbers.get(phoneNumberId);
  if (!stats) numbers.set(phoneNumberId, (stats = { arrivals: [], answered: 0, hung: 0 }));
  stats.arrivals.push(arrivedAt);
  const body = await readBody(request);
  if (Math.random() < options.hangFraction) {
    // Never answered: the client's timeout ends it.
    stats.hung++;
    return;
  }
  setTimeout(() => {
    stats.answered++;
    const to = String(body.to ?? '');
    json(response, 200, {
      messaging_product: 'whatsapp',
      contacts: [{ input: to, wa_id: to.replace(/^\+/, '') }],
      messages: [{ id: `wamid.${randomBytes(12).toString('base64url')}` }],
    });
  }, options.latencyMs);
}

async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://fake');
  const parts = url.pathname.split('/').filter(Boolean);
  if (url.pathname === '/_stats') return json(response, 200, { options, numbers: Object.fromEntries(numbers), stalls });
  // Every Graph path starts with the API version (v23.0, …).
  const [version, first, second] = parts;
  if (!version || !/^v\d+\.\d+$/.test(version)) return json(response, 404, { error: { message: 'Unknown path', code: 100 } });
  if (request.method === 'POST' && first && second === 'messages' && parts.length === 3) return sendMessage(first, request, response);
  if (request.method === 'GET' && first === 'debug_token') {
    return json(response, 200, {
      data: {
        app_id: '1000', type: 'SYSTEM_USER', is_valid: true,
        scopes: ['whatsapp_business_management', 'whatsapp_business_messaging'],
        granular_scopes: [
          { scope: 'whatsapp_business_management', target_ids: [WABA_ID] },
          { scope: 'whatsapp_business_messaging', target_ids: [WABA_ID] },
        ],
      },
    });
  }
  if (first === WABA_ID && second === 'phone_numbers') return json(response, 200, { data: [...numbers.keys()].map((id) => ({ id })) });
  if (first === WABA_ID && second === 'message_templates') {
    if (request.method === 'POST') {
      const body = await readBody(request);
      const template = { id: `9${String(++templateCount).padStart(14, '0')}`, name: body.name, language: body.language, category: body.category, status: 'APPROVED' };
      templates.set(template.id, template);
      return json(response, 200, { id: template.id, status: template.status, category: template.category });
    }
    const name = url.searchParams.get('name');
    return json(response, 200, { data: [...templates.values()].filter((template) => !name || template.name === name) });
  }
  if (request.method === 'GET' && first && parts.length === 2) {
    const template = templates.get(first);
    if (template) return json(response, 200, template);
    // Anything else is taken for a phone number id (GET /{phone-number-id}).
    return json(response, 200, {
      id: first, display_phone_number: '+1 555-000-0000', verified_name: 'Bench', quality_rating: 'GREEN',
      code_verification_status: 'VERIFIED', platform_type: 'CLOUD_API', throughput: { level: 'STANDARD' },
    });
  }
  return json(response, 404, { error: { message: 'Unsupported request', type: 'GraphMethodException', code: 100 } });
}

const server = createServer((request, response) => {
  route(request, response).catch(() => json(response, 500, { error: { message: 'fake failed', code: 1 } }));
});
// Longer than the client's keep-alive, so the fake never closes a connection the client is about to reuse.
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.requestTimeout = 0;
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  console.log(`fake graph listening http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => process.exit(0));
