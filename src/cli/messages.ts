import type { Command } from 'commander';
import type { Message, MessageEvent, PagedQuery } from '#sdk';
import { signedIn } from './api.ts';
import { group, leaf, runs } from './command.ts';
import { EventFeed, LOOKBACK_MS, sinceOf } from './eventFeed.ts';
import { usageError } from './exitCodes.ts';
import { describeMessage } from './messageView.ts';
import { shortTime, table } from './output.ts';
import { parseDuration, sleep } from './waiting.ts';

// svc messages list|get|tail|cancel.

interface ListOptions {
  json?: boolean;
  status?: string;
  to?: string;
  template?: string;
  batch?: string;
  since?: string;
  until?: string;
  limit: string;
  all?: boolean;
}

function countOf(text: string): number {
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1) throw usageError(`--limit must be a whole number above 0, not "${text}"`);
  return count;
}

export function registerMessageCommands(program: Command): void {
  const messages = group(program, 'messages', 'the project’s messages');

  const list = leaf(messages, 'list', 'messages, newest first')
    .option('--status <status>', 'QUEUED, SENT, DELIVERED, READ, FAILED or CANCELED')
    .option('--to <number>', 'one recipient (E.164)')
    .option('--template <name>', 'one template')
    .option('--batch <id>', 'one batch (bat_…)')
    .option('--since <time>', 'queued at or after this ISO time')
    .option('--until <time>', 'queued before this ISO time')
    .option('--limit <n>', 'show at most this many', '50')
    .option('--all', 'show every one (page after page)');
  runs<ListOptions>(list, async (out, options) => {
    const limit = options.all ? Infinity : countOf(options.limit);
    const api = signedIn();
    // Values go as given (the status upper-cased): the API answers 400 naming the allowed ones.
    const query: PagedQuery<'/v1/messages'> = {
      ...(options.status !== undefined && { status: options.status.toUpperCase() as Message['status'] }),
      ...(options.to !== undefined && { to: options.to }),
      ...(options.template !== undefined && { template: options.template }),
      ...(options.batch !== undefined && { batchId: options.batch }),
      ...(options.since !== undefined && { since: options.since }),
      ...(options.until !== undefined && { until: options.until }),
      limit: Math.min(200, limit),
    };
    const shown: Message[] = [];
    for await (const message of api.paginate('/v1/messages', query)) {
      shown.push(message);
      if (shown.length >= limit) break;
    }
    out.result(shown, () =>
      table(
        ['ID', 'STATUS', 'TO', 'TEMPLATE', 'LANGUAGE', 'QUEUED', 'UPDATED'],
        shown.map((message) => [message.id, message.status, message.to, message.template, message.language, shortTime(message.queuedAt), shortTime(message.updatedAt)]),
      ),
    );
  });

  const get = leaf(messages, 'get <id>', 'one message: its content and its timeline').option(
    '--events',
    'also each status change with its webhook deliveries',
  );
  runs<{ json?: boolean; events?: boolean }>(get, async (out, options, id) => {
    const api = signedIn();
    const message = await api.call(api.svc.GET('/v1/messages/{id}', { params: { path: { id: id! } } }));
    if (!options.events) {
      out.result(message, () => describeMessage(message));
      return;
    }
    const events: MessageEvent[] = await api.call(api.svc.GET('/v1/messages/{id}/events', { params: { path: { id: id! } } }));
    out.result({ ...message, events }, () =>
      [
        describeMessage(message),
        '  webhooks:',
        ...events.flatMap((event) =>
          event.deliveries.map(
            (delivery) =>
              `  ${String(event.event).padEnd(18)} ${delivery.id}  ${delivery.status}, ${delivery.attempts.length} attempt(s)` +
              (delivery.attempts.at(-1)?.statusCode !== undefined ? `, last ${delivery.attempts.at(-1)!.statusCode}` : ''),
          ),
        ),
      ].join('\n'),
    );
  });

  const tail = leaf(messages, 'tail', 'print new messages, status changes and replies as they happen, until Ctrl-C')
    .option('--since <when>', 'start this far back (10m, 2h) or at an ISO time (default: now)')
    .option('--interval <duration>', 'how often to ask', '1s');
  runs<{ json?: boolean; since?: string; interval: string }>(tail, async (out, options) => {
    const intervalMs = parseDuration(options.interval, '--interval');
    const sinceMs = sinceOf(options.since);
    const api = signedIn();
    const events = new EventFeed(api, sinceMs);
    const queued = new NewMessages(sinceMs);
    process.on('SIGINT', () => process.exit(0));
    out.note(`Following this project's messages from ${new Date(sinceMs).toISOString()}; Ctrl-C to stop.`);
    for (;;) {
      // Events first: a message whose change is read here was committed before the list of new
      // messages below is asked for, so its QUEUED line is never printed after its changes.
      const changes = await events.poll();
      const lines: TailLine[] = (await queued.poll(api)).map((message) => ({
        event: 'message.queued',
        messageId: message.id,
        to: message.to,
        template: message.template,
        status: 'QUEUED',
        occurredAt: message.queuedAt,
      }));
      for (const event of changes) {
        const payload = event.payload as {
          message_id?: string;
          to?: string;
          template?: string;
          status?: string;
          error?: TailLine['error'];
          reply?: TailLine['reply'];
        };
        lines.push({
          event: event.type,
          messageId: payload.message_id ?? '',
          to: payload.to ?? '',
          template: payload.template ?? '',
          // A reply changes no status: its line says what was answered instead.
          ...(payload.reply ? { reply: payload.reply } : { status: payload.status ?? '' }),
          occurredAt: event.occurredAt,
          ...(payload.error && { error: payload.error }),
        });
      }
      // Oldest first; a message's QUEUED before its first status change at the same millisecond.
      lines.sort((a, b) => a.occurredAt.localeCompare(b.occurredAt));
      for (const line of lines) out.item(line, () => tailLine(line));
      await sleep(intervalMs);
    }
  });

  runs(leaf(messages, 'cancel <id>', 'cancel a message not yet submitted (QUEUED, e.g. scheduled)'), async (out, _options, id) => {
    const api = signedIn();
    const message = await api.call(api.svc.POST('/v1/messages/{id}/cancel', { params: { path: { id: id! } } }));
    out.result(message, () => `${message.id} is ${message.status}${message.canceledAt ? ` since ${shortTime(message.canceledAt)}` : ''}.`);
  });
}

interface TailLine {
  event: string;
  messageId: string;
  to: string;
  template: string;
  /** The new status; absent on a reply (message.replied), which changes none. */
  status?: string;
  occurredAt: string;
  error?: { code: string; title: string; message: string };
  /** message.replied: what the recipient answered. */
  reply?: { type: string; text: string; payload?: string };
}

function tailLine(line: TailLine): string {
  const start = `${shortTime(line.occurredAt)}  ${line.messageId}  ${line.to}  ${line.template}`;
  if (line.reply) {
    const payload = line.reply.payload !== undefined && line.reply.payload !== line.reply.text ? ` (payload ${JSON.stringify(line.reply.payload)})` : '';
    return `${start}  REPLIED ${line.reply.type} ${JSON.stringify(line.reply.text)}${payload}`;
  }
  const why = line.error ? `  ${line.error.code} ${line.error.title}` : '';
  return `${start}  ${line.status}${why}`;
}

/** Messages queued from `sinceMs` on: each poll() gives those not given before, oldest first. */
class NewMessages {
  readonly #sinceMs: number;
  readonly #seen = new Map<string, number>();
  #polled = false;

  constructor(sinceMs: number) {
    this.#sinceMs = sinceMs;
  }

  async poll(api: ReturnType<typeof signedIn>): Promise<Message[]> {
    // From the start the first time; then from a little back (a message may commit late).
    const from = this.#polled ? Math.max(this.#sinceMs, Date.now() - LOOKBACK_MS) : this.#sinceMs;
    this.#polled = true;
    const since = new Date(from).toISOString();
    const fresh: Message[] = [];
    for await (const message of api.paginate('/v1/messages', { since, limit: 200 })) {
      if (this.#seen.has(message.id)) continue;
      this.#seen.set(message.id, Date.parse(message.queuedAt));
      fresh.push(message);
    }
    const forgetBefore = Date.now() - 2 * LOOKBACK_MS;
    for (const [id, time] of this.#seen) if (time < forgetBefore) this.#seen.delete(id);
    return fresh.reverse();
  }
}
