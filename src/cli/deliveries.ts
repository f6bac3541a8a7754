import type { Command } from 'commander';
import type { PagedQuery, WebhookDelivery } from '#sdk';
import { signedIn } from './api.ts';
import { group, leaf, runs } from './command.ts';
import { usageError } from './exitCodes.ts';
import { shortTime, table } from './output.ts';

// svc deliveries list|get|retry: the webhook deliveries svc made, and replaying one.

interface ListOptions {
  json?: boolean;
  status?: string;
  event?: string;
  message?: string;
  limit: string;
}

function describe(delivery: WebhookDelivery): string {
  return [
    `${delivery.id}  ${delivery.event}  ${delivery.status}`,
    `  url:     ${delivery.url}`,
    `  message: ${delivery.messageId ?? '-'}`,
    ...(delivery.nextAttemptAt ? [`  next attempt: ${shortTime(delivery.nextAttemptAt)}`] : []),
    '  attempts:',
    ...delivery.attempts.map(
      (attempt) =>
        `  ${String(attempt.attempt).padStart(3)}  ${shortTime(attempt.at)}  ${attempt.statusCode ?? '-'}  ${attempt.durationMs} ms` +
        (attempt.error ? `  ${attempt.error}` : ''),
    ),
  ].join('\n');
}

export function registerDeliveryCommands(program: Command): void {
  const deliveries = group(program, 'deliveries', 'webhook deliveries and their attempts');

  const list = leaf(deliveries, 'list', 'deliveries, newest first')
    .option('--status <status>', 'pending, succeeded or failed')
    .option('--event <name>', 'one event, e.g. message.failed')
    .option('--message <id>', 'one message’s deliveries')
    .option('--limit <n>', 'show at most this many', '50');
  runs<ListOptions>(list, async (out, options) => {
    const limit = Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1) throw usageError(`--limit must be a whole number above 0, not "${options.limit}"`);
    const api = signedIn();
    // Values go as given (the status lower-cased): the API answers 400 naming the allowed ones.
    const query: PagedQuery<'/v1/webhook-deliveries'> = {
      ...(options.status !== undefined && { status: options.status.toLowerCase() as WebhookDelivery['status'] }),
      ...(options.event !== undefined && { event: options.event as WebhookDelivery['event'] }),
      ...(options.message !== undefined && { messageId: options.message }),
      limit: Math.min(200, limit),
    };
    const shown: WebhookDelivery[] = [];
    for await (const delivery of api.paginate('/v1/webhook-deliveries', query)) {
      shown.push(delivery);
      if (shown.length >= limit) break;
    }
    out.result(shown, () =>
      table(
        ['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST', 'MESSAGE', 'URL'],
        shown.map((delivery) => [
          delivery.id,
          delivery.event,
          delivery.status,
          delivery.attempts.length,
          delivery.attempts.at(-1)?.statusCode ?? delivery.attempts.at(-1)?.error,
          delivery.messageId,
          delivery.url,
        ]),
      ),
    );
  });

  runs(leaf(deliveries, 'get <id>', 'one delivery with every attempt'), async (out, _options, id) => {
    const api = signedIn();
    const delivery = await api.call(api.svc.GET('/v1/webhook-deliveries/{id}', { params: { path: { id: id! } } }));
    out.result(delivery, () => describe(delivery));
  });

  runs(leaf(deliveries, 'retry <id>', 'deliver it again now (to the URL it was for)'), async (out, _options, id) => {
    const api = signedIn();
    const delivery = await api.call(api.svc.POST('/v1/webhook-deliveries/{id}/retry', { params: { path: { id: id! } } }));
    out.result(delivery, () => `Retrying ${delivery.id} (${delivery.event}) to ${delivery.url}: ${delivery.status}.`);
  });
}
