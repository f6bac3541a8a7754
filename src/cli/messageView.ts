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

export function statusLine(status: string, at: string, message: Message): string {
  const why = status === 'FAILED' && message.error ? `  ${message.error.code} ${message.error.title}: ${message.error.message}` : '';
  return `  ${status.padEnd(9)} ${shortTime(at)}${why}`;
}

export function describeMessage(message: Message): string {
  const lines = [
    `${message.id}  ${message.status}`,
    `  to:        ${message.to}`,
    `  template:  ${message.template} (${message.language})`,
    ...(message.batchId ? [`  batch:     ${message.batchId}`] : []),
    ...(message.scheduledFor ? [`  scheduled: ${shortTime(message.scheduledFor)}`] : []),
    ...(message.content.header ? [`  header:    ${message.content.header}`] : []),
    `  body:      ${message.content.body}`,
    ...(message.content.footer ? [`  footer:    ${message.content.footer}`] : []),
    ...(message.providerMessageId ? [`  provider:  ${message.providerMessageId}`] : []),
    '  timeline:',
    ...timelineOf(message).map((step) => statusLine(step.status, step.at, message)),
  ];
  return lines.join('\n');
}
