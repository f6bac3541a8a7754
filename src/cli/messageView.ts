import type { Message } from '#sdk';
import { shortTime } from './output.ts';

// A message as the CLI shows it: its timeline from its timestamps, its content.

export const FINAL_STATUSES = new Set(['READ', 'FAILED', 'CANCELED']);

/** The statuses a message has reached, each with when, in the order they happened. */
export function timelineOf(message: Message): { status: string; at: string }[] {
  const steps: { status: string; at: string | null | undefined }[] = [
    { status: 'QUEUED', at: message.queuedAt },
    { status: 'SENT', at: message.sentAt },
    { status: 'DELIVERED', at: message.deliveredAt },
    { status: 'READ', at: message.readAt },
    { status: 'FAILED', at: message.failedAt },
    { status: 'CANCELED', at: message.canceledAt },
  ];
  return steps
    .filter((step): step is { status: string; at: string } => typeof step.at === 'string')
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

/** The provider API that took a message (issue 23), in words. */
export function routeLabel(route: string): string {
  return { cloud_api: 'Cloud API', marketing_messages: 'Marketing Messages API' }[route] ?? route;
}

export function statusLine(status: string, at: string, message: Message): string {
  const why = status === 'FAILED' && message.error ? `  ${message.error.code} ${message.error.title}: ${message.error.message}` : '';
  return `  ${status.padEnd(9)} ${shortTime(at)}${why}`;
}

/** A TEXT header as written; a rich template's media or location header named. */
function headerLine(header: NonNullable<Message['content']['header']>): string {
  if (typeof header === 'string') return header;
  if (header.type === 'LOCATION') return `location ${header.latitude}, ${header.longitude}${header.name ? ` (${header.name})` : ''}`;
  return `${header.type.toLowerCase()} ${header.link}`;
}

export function describeMessage(message: Message): string {
  const lines = [
    `${message.id}  ${message.status}`,
    `  to:        ${message.to}`,
    `  template:  ${message.template} (${message.language})`,
    ...(message.batchId ? [`  batch:     ${message.batchId}`] : []),
    ...(message.scheduledFor ? [`  scheduled: ${shortTime(message.scheduledFor)}`] : []),
    ...(message.content.header ? [`  header:    ${headerLine(message.content.header)}`] : []),
    `  body:      ${message.content.body}`,
    ...(message.content.footer ? [`  footer:    ${message.content.footer}`] : []),
    ...(message.content.buttons ?? []).map((button) => `  button:    ${button.text}${button.url ? ` → ${button.url}` : ''}`),
    ...(message.providerMessageId ? [`  provider:  ${message.providerMessageId}`] : []),
    ...(message.route ? [`  route:     ${routeLabel(message.route)}`] : []),
    '  timeline:',
    ...timelineOf(message).map((step) => statusLine(step.status, step.at, message)),
  ];
  return lines.join('\n');
}
