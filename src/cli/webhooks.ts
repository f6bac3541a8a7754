import { createHash } from 'node:crypto';
import type { Command } from 'commander';
import { signWebhook } from '#sdk';
import { signedIn } from './api.ts';
import { group, leaf, runs } from './command.ts';
import { listenSecret } from './configStore.ts';
import { EventFeed, type FeedEvent, sinceOf } from './eventFeed.ts';
import { usageError } from './exitCodes.ts';
import { parseDuration, sleep } from './waiting.ts';

// svc webhooks listen: forwards the project's events (GET /v1/events) to a local URL as svc
// would deliver them — the same body, the spec's headers and Standard Webhooks headers — signed
// with a local secret, so a receiver can be built and tested on a laptop.

interface ListenOptions {
  json?: boolean;
  forwardTo: string;
  events?: string;
  since?: string;
  interval: string;
}

interface Forwarded {
  eventId: string;
  type: string;
  deliveryId: string;
  statusCode?: number;
  error?: string;
  durationMs: number;
}

/** A UUID made from the event id: the same X-Service-Delivery / webhook-id on every forward of the event. */
function deliveryIdOf(eventId: string): string {
  const hex = createHash('sha256').update(`svc-listen:${eventId}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

async function forward(url: string, secret: string, event: FeedEvent, timeoutMs = 10_000): Promise<Forwarded> {
  const body = JSON.stringify(event.payload);
  const deliveryId = deliveryIdOf(event.id);
  const timestamp = Math.floor(Date.now() / 1000);
  const started = performance.now();
  const base = { eventId: event.id, type: event.type, deliveryId };
  try {
    const response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Service/1.0',
        'x-service-event': event.type,
        'x-service-delivery': deliveryId,
        'x-service-delivery-attempt': '1',
        'webhook-id': deliveryId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': await signWebhook({ secret, id: deliveryId, timestamp, payload: body }),
      },
      body,
    });
    await response.arrayBuffer();
    return { ...base, statusCode: response.status, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    return { ...base, error: why, durationMs: Math.round(performance.now() - started) };
  }
}

export function registerWebhookCommands(program: Command): void {
  const webhooks = group(program, 'webhooks', 'webhook endpoints, the signing secret, and listen for development');
  const listen = leaf(webhooks, 'listen', 'forward the project’s events to a local URL, signed with a local secret, until Ctrl-C')
    .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://localhost:3000/webhooks')
    .option('--events <names>', 'only these events, comma-separated (e.g. message.delivered,message.failed)')
    .option('--since <when>', 'also forward the events of this far back (10m, 2h) or since an ISO time')
    .option('--interval <duration>', 'how often to ask svc for new events', '1s')
    .addHelpText(
      'after',
      `
Each event is POSTed with the body svc's webhook carries and its headers (X-Service-Event,
X-Service-Delivery, webhook-id, webhook-timestamp, webhook-signature), signed with the
whsec_… secret printed at start: it stays the same for this config (${'$'}XDG_CONFIG_HOME/svc),
so a receiver can keep it. The receiver's answer is printed; failures are not retried.`,
    );
  runs<ListenOptions>(listen, async (out, options) => {
    if (!URL.canParse(options.forwardTo) || !/^https?:$/.test(new URL(options.forwardTo).protocol)) {
      throw usageError(`--forward-to must be an http(s) URL, not "${options.forwardTo}"`);
    }
    const wanted = options.events ? new Set(options.events.split(',').map((name) => name.trim())) : undefined;
    const intervalMs = parseDuration(options.interval, '--interval');
    const sinceMs = sinceOf(options.since);
    const api = signedIn();
    await api.call(api.svc.GET('/v1/projects/me'));
    const secret = listenSecret();
    const feed = new EventFeed(api, sinceMs);
    process.on('SIGINT', () => process.exit(0));
    out.item({ ready: true, forwardTo: options.forwardTo, secret }, () =>
      `Ready. Forwarding this project's events to ${options.forwardTo} (Ctrl-C to stop).\n` +
      `Webhook signing secret: ${secret}`,
    );
    for (;;) {
      for (const event of await feed.poll()) {
        if (wanted && !wanted.has(event.type)) continue;
        const result = await forward(options.forwardTo, secret, event);
        out.item(result, () =>
          `${event.occurredAt}  ${event.type.padEnd(18)} ${event.id}  → ` +
          (result.statusCode !== undefined ? `${result.statusCode}` : `failed: ${result.error}`) +
          ` (${result.durationMs} ms)`,
        );
      }
      await sleep(intervalMs);
    }
  });
}
