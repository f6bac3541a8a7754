import type { Command } from 'commander';
import { signedIn } from './api.ts';
import { collect, group, leaf, runs } from './command.ts';
import { usageError } from './exitCodes.ts';
import { shortTime, table } from './output.ts';
import { confirm, interactive } from './prompt.ts';

// svc webhooks endpoints list|get|create|update|delete|test: the project's webhook endpoints
// (/v1/webhook-endpoints), each one API call. Event names are checked by svc (422
// webhook_event_unknown names the known ones), so the CLI keeps no list of its own to go stale.

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  allEvents: boolean;
  enabled: boolean;
  description: string | null;
  createdAt: string;
  updatedAt: string;
}

interface EventOptions {
  events?: string[];
  allEvents?: boolean;
}

/** `--events a,b --events c` as one list; an empty name is a usage error. */
function eventNames(values: string[]): string[] {
  const names = values.flatMap((value) => value.split(',')).map((name) => name.trim());
  if (names.length === 0 || names.some((name) => name === '')) throw usageError('--events takes event names, e.g. message.failed,template.rejected');
  return names;
}

function describeEndpoint(endpoint: Endpoint): string {
  return [
    `${endpoint.id}  ${endpoint.enabled ? 'enabled' : 'DISABLED'}`,
    `  url:          ${endpoint.url}`,
    `  events:       ${endpoint.allEvents ? 'all events (including ones added later)' : endpoint.events.join(', ')}`,
    `  description:  ${endpoint.description ?? '-'}`,
    `  created:      ${shortTime(endpoint.createdAt)}   updated: ${shortTime(endpoint.updatedAt)}`,
  ].join('\n');
}

const eventsOption = 'receive only these events, comma-separated or repeated (e.g. message.failed,template.rejected)';

export function registerWebhookEndpointCommands(webhooks: Command): void {
  const endpoints = group(webhooks, 'endpoints', 'the project’s webhook endpoints: URLs that receive its events');

  runs(leaf(endpoints, 'list', 'the endpoints, newest first'), async (out) => {
    const api = signedIn();
    const all: Endpoint[] = [];
    for await (const endpoint of api.paginate('/v1/webhook-endpoints')) all.push(endpoint as Endpoint);
    out.result(all, () =>
      table(
        ['ID', 'URL', 'EVENTS', 'ENABLED', 'DESCRIPTION'],
        all.map((endpoint) => [endpoint.id, endpoint.url, endpoint.allEvents ? 'all' : endpoint.events.join(','), endpoint.enabled ? 'yes' : 'no', endpoint.description]),
      ),
    );
  });

  runs(leaf(endpoints, 'get <id>', 'one endpoint'), async (out, _options, id) => {
    const api = signedIn();
    const endpoint = await api.call(api.svc.GET('/v1/webhook-endpoints/{id}', { params: { path: { id: id! } } }));
    out.result(endpoint, () => describeEndpoint(endpoint as Endpoint));
  });

  const create = leaf(endpoints, 'create', 'add an endpoint; without --events it receives every event')
    .requiredOption('--url <url>', 'where svc POSTs the events (https; a public host)')
    .option('--events <names>', eventsOption, collect)
    .option('--description <text>', 'a note of yours')
    .option('--disabled', 'create it disabled (it receives nothing until enabled)');
  runs<{ json?: boolean; url: string; events?: string[]; description?: string; disabled?: boolean }>(create, async (out, options) => {
    const api = signedIn();
    const body = {
      url: options.url,
      ...(options.events !== undefined && { events: eventNames(options.events) }),
      ...(options.description !== undefined && { description: options.description }),
      ...(options.disabled && { enabled: false }),
    };
    const endpoint = await api.call(api.svc.POST('/v1/webhook-endpoints', { body }));
    out.result(endpoint, () => `Created webhook endpoint ${endpoint.id}.\n${describeEndpoint(endpoint as Endpoint)}`);
  });

  const update = leaf(endpoints, 'update <id>', 'change an endpoint: only the options given change')
    .option('--url <url>', 'a new URL (applies to its deliveries not yet succeeded, too)')
    .option('--events <names>', eventsOption, collect)
    .option('--all-events', 'receive every event, including ones added later')
    .option('--description <text>', 'a new note')
    .option('--no-description', 'remove the note')
    .option('--enable', 'enable it')
    .option('--disable', 'disable it: no new deliveries; its pending ones fail')
    .addHelpText('after', '\nAt least one option is needed. --events and --all-events, like --enable and --disable, exclude each other.');
  type UpdateOptions = EventOptions & { json?: boolean; url?: string; description?: string | false; enable?: boolean; disable?: boolean };
  runs<UpdateOptions>(update, async (out, options, id) => {
    if (options.events !== undefined && options.allEvents) throw usageError('give --events or --all-events, not both');
    if (options.enable && options.disable) throw usageError('give --enable or --disable, not both');
    const body = {
      ...(options.url !== undefined && { url: options.url }),
      ...(options.events !== undefined && { events: eventNames(options.events) }),
      ...(options.allEvents && { events: null }),
      ...(typeof options.description === 'string' && { description: options.description }),
      ...(options.description === false && { description: null }),
      ...(options.enable && { enabled: true }),
      ...(options.disable && { enabled: false }),
    };
    if (Object.keys(body).length === 0) throw usageError('nothing to change: give --url, --events, --all-events, --description, --no-description, --enable or --disable');
    const api = signedIn();
    const endpoint = await api.call(api.svc.PATCH('/v1/webhook-endpoints/{id}', { params: { path: { id: id! } }, body }));
    out.result(endpoint, () => `Updated webhook endpoint ${endpoint.id}.\n${describeEndpoint(endpoint as Endpoint)}`);
  });

  const remove = leaf(endpoints, 'delete <id>', 'delete an endpoint; its pending deliveries fail').option('--yes', 'do not ask');
  runs<{ json?: boolean; yes?: boolean }>(remove, async (out, options, id) => {
    if (!options.yes) {
      if (!interactive()) throw usageError(`Delete webhook endpoint ${id}? Asked without a terminal: add --yes`);
      if (!(await confirm(`Delete webhook endpoint ${id}?`, false))) return;
    }
    const api = signedIn();
    await api.call(api.svc.DELETE('/v1/webhook-endpoints/{id}', { params: { path: { id: id! } } }));
    out.result({ id, deleted: true }, () => `Deleted webhook endpoint ${id}.`);
  });

  runs(leaf(endpoints, 'test <id>', 'send it a signed webhook.test event (a delivery like any other)'), async (out, _options, id) => {
    const api = signedIn();
    const answer = await api.call(api.svc.POST('/v1/webhook-endpoints/{id}/test', { params: { path: { id: id! } } }));
    out.result(answer, () => `Sent a webhook.test event: delivery ${answer.deliveryId}.\nSee how it went: svc deliveries get ${answer.deliveryId}`);
  });
}
