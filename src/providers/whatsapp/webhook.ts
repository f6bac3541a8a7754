import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ProviderError, ProviderReport } from '../provider.ts';
import { rejectionReason } from './payloads.ts';

// Meta's webhook: the signature check and the payload → reports mapping. Pure: no I/O.

type MessageReport = Extract<ProviderReport, { kind: 'message' }>;

/** A template review, named by Meta's template id (svc's templates are found by it). */
export interface TemplateStatusUpdate {
  providerTemplateId: string;
  status: 'APPROVED' | 'REJECTED';
  reason?: string;
  occurredAt: number;
}

export interface WebhookReports {
  messages: MessageReport[];
  templates: TemplateStatusUpdate[];
}

/** `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed with the app secret>`. */
export function hasValidSignature(rawBody: Buffer, header: string | undefined, appSecret: string): boolean {
  if (header === undefined) return false;
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match) return false;
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(match[1]!, 'hex'));
}

export function signatureOf(rawBody: Buffer | string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

const MESSAGE_STATUSES = { sent: 'SENT', delivered: 'DELIVERED', read: 'READ', failed: 'FAILED' } as const;

type Json = Record<string, unknown>;

function objects(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((item): item is Json => item !== null && typeof item === 'object') : [];
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** Meta's timestamps are Unix seconds (as strings in status objects, numbers in entry.time). */
function millisOf(seconds: unknown, fallback: number): number {
  const value = Number(seconds);
  return Number.isFinite(value) && value > 0 ? value * 1000 : fallback;
}

function statusError(status: Json): ProviderError | undefined {
  const [first] = objects(status.errors);
  if (!first) return undefined;
  const title = text(first.title) ?? text(first.message) ?? 'Message failed';
  const details = (first.error_data as Json | undefined)?.details;
  return { code: text(first.code) ?? 'unknown', title, message: text(details) ?? text(first.message) ?? title };
}

function messageReports(value: Json, now: number): MessageReport[] {
  const reports: MessageReport[] = [];
  for (const status of objects(value.statuses)) {
    const mapped = MESSAGE_STATUSES[text(status.status) as keyof typeof MESSAGE_STATUSES];
    const providerMessageId = text(status.id);
    // Other statuses (deleted, warning, …) are not part of svc's lifecycle.
    if (mapped === undefined || providerMessageId === undefined) continue;
    const messageId = text(status.biz_opaque_callback_data);
    const error = mapped === 'FAILED' ? statusError(status) : undefined;
    reports.push({
      kind: 'message',
      providerMessageId,
      ...(messageId !== undefined && { messageId }),
      status: mapped,
      occurredAt: millisOf(status.timestamp, now),
      ...(error && { error }),
    });
  }
  return reports;
}

function templateUpdate(value: Json, occurredAt: number): TemplateStatusUpdate | undefined {
  const providerTemplateId = text(value.message_template_id);
  const event = text(value.event);
  if (providerTemplateId === undefined || event === undefined) return undefined;
  if (event === 'APPROVED') return { providerTemplateId, status: 'APPROVED', occurredAt };
  if (event === 'REJECTED' || event === 'DISABLED') {
    return { providerTemplateId, status: 'REJECTED', reason: rejectionReason(text(value.reason), event), occurredAt };
  }
  // PENDING, PAUSED, FLAGGED, REINSTATED, …: no review outcome for svc.
  return undefined;
}

/** Every report a webhook carries; anything unrecognised is skipped. */
export function reportsOf(payload: unknown, now = Date.now()): WebhookReports {
  const reports: WebhookReports = { messages: [], templates: [] };
  if (payload === null || typeof payload !== 'object') return reports;
  for (const entry of objects((payload as Json).entry)) {
    for (const change of objects(entry.changes)) {
      const value = change.value;
      if (value === null || typeof value !== 'object') continue;
      if (change.field === 'messages') reports.messages.push(...messageReports(value as Json, now));
      if (change.field === 'message_template_status_update') {
        const update = templateUpdate(value as Json, millisOf(entry.time, now));
        if (update) reports.templates.push(update);
      }
    }
  }
  return reports;
}
