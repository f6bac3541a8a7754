import { createHmac, timingSafeEqual } from 'node:crypto';
import { pricingOf } from '../../domain/pricing.ts';
import { cardCategory, tierLowerBound } from '../../domain/rateCard.ts';
import { MAX_CLOCK_SKEW_MS } from '../../domain/reportedTime.ts';
import { e164Of } from '../../domain/inboundMessages.ts';
import { isBusinessScopedUserId } from '../../domain/messageRequest.ts';
import type { ProviderError, ProviderReport, RecipientIdentities, VolumeTierUpdate } from '../provider.ts';
import { rejectionReason } from './payloads.ts';
import { type Json, object, objects, text } from './json.ts';

// Meta's webhook: the signature check and the payload → reports mapping. Pure: no I/O. Fields
// (webhooks reference): messages (statuses), message_template_status_update,
// template_category_update, phone_number_quality_update and account_update's
// VOLUME_BASED_PRICING_TIER_UPDATE; anything else is skipped.

type MessageReport = Extract<ProviderReport, { kind: 'message' }>;

/** A template's new status at Meta, named by Meta's template id (svc's templates are found by it). */
export interface TemplateStatusUpdate {
  providerTemplateId: string;
  /** The WABA that reports it (entry.id). */
  businessAccountId: string | undefined;
  /** The review outcome it implies for a PENDING template, if any. */
  status?: 'APPROVED' | 'REJECTED';
  providerStatus: string;
  reason?: string;
  occurredAt: number;
}

export interface TemplateCategoryUpdate {
  providerTemplateId: string;
  businessAccountId: string | undefined;
  category: string;
  upcoming?: { category: string; effectiveAt: number };
  occurredAt: number;
}

export interface WebhookReports {
  messages: MessageReport[];
  templates: TemplateStatusUpdate[];
  categories: TemplateCategoryUpdate[];
  /** WABAs whose numbers' throughput or limits changed (phone_number_quality_update). */
  accountChanges: string[];
  volumeTiers: VolumeTierUpdate[];
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

/** An announced change takes effect within a day (Meta: 24 hours); a week is the most believed. */
const MAX_ANNOUNCED_AHEAD_MS = 7 * 24 * 3600_000;

/**
 * Meta's timestamps are Unix seconds (strings in status objects, numbers in entry.time). Anything
 * else (an object, a negative number, a date too far ahead) is not taken as it is: `fallback`
 * stands in for a missing or unreadable one, and none is later than `latest` (by default now plus
 * a little skew).
 */
function millisOf(seconds: unknown, now: number, fallback = now, latest = now + MAX_CLOCK_SKEW_MS): number {
  if (typeof seconds !== 'string' && typeof seconds !== 'number') return fallback;
  const value = Number(seconds);
  if (!Number.isFinite(value) || value <= 0) return fallback;
  return Math.min(value * 1000, latest);
}

function statusError(status: Json): ProviderError | undefined {
  const [first] = objects(status.errors);
  if (!first) return undefined;
  const title = text(first.title) ?? text(first.message) ?? 'Message failed';
  const details = object(first.error_data)?.details;
  return { code: text(first.code) ?? 'unknown', title, message: text(details) ?? text(first.message) ?? title };
}

function messageReports(value: Json, now: number): MessageReport[] {
  const reports: MessageReport[] = [];
  const phoneNumberId = text(object(value.metadata)?.phone_number_id);
  for (const status of objects(value.statuses)) {
    const mapped = MESSAGE_STATUSES[text(status.status) as keyof typeof MESSAGE_STATUSES];
    const providerMessageId = text(status.id);
    // Other statuses (deleted, warning, …) are not part of svc's lifecycle.
    if (mapped === undefined || providerMessageId === undefined) continue;
    const messageId = text(status.biz_opaque_callback_data);
    const error = mapped === 'FAILED' ? statusError(status) : undefined;
    const pricing = pricingOf(status.pricing);
    const recipient = recipientOf(text(status.recipient_id), text(status.recipient_user_id));
    reports.push({
      kind: 'message',
      providerMessageId,
      ...(messageId !== undefined && { messageId }),
      ...(phoneNumberId !== undefined && { phoneNumberId }),
      status: mapped,
      occurredAt: millisOf(status.timestamp, now),
      ...(error && { error }),
      ...(pricing && { pricing }),
      ...(recipient && { recipient }),
    });
  }
  return reports;
}

/**
 * A user's identities as Meta's payloads carry them: a phone number as digits (`wa_id`,
 * `recipient_id`; empty when the user hides it behind a username) and a BSUID (`user_id`,
 * `recipient_user_id`). Values of another shape are ignored; undefined when none is readable.
 */
export function recipientOf(waId: string | undefined, userId: string | undefined): RecipientIdentities | undefined {
  const phone = waId === undefined ? undefined : e164Of(waId);
  const bsuid = userId !== undefined && isBusinessScopedUserId(userId) ? userId : undefined;
  if (phone === undefined && bsuid === undefined) return undefined;
  return { ...(phone !== undefined && { phone }), ...(bsuid !== undefined && { userId: bsuid }) };
}

/** Meta's template events → the review outcome each implies for a PENDING template (none: no outcome), and Meta's status. */
const TEMPLATE_EVENTS: Readonly<Record<string, { status?: 'APPROVED' | 'REJECTED'; providerStatus: string }>> = {
  APPROVED: { status: 'APPROVED', providerStatus: 'APPROVED' },
  // No longer flagged or disabled: active again.
  REINSTATED: { status: 'APPROVED', providerStatus: 'APPROVED' },
  PAUSED: { status: 'APPROVED', providerStatus: 'PAUSED' },
  FLAGGED: { status: 'APPROVED', providerStatus: 'FLAGGED' },
  LOCKED: { status: 'APPROVED', providerStatus: 'LOCKED' },
  REJECTED: { status: 'REJECTED', providerStatus: 'REJECTED' },
  DISABLED: { status: 'REJECTED', providerStatus: 'DISABLED' },
  DELETED: { status: 'REJECTED', providerStatus: 'DELETED' },
  PENDING_DELETION: { status: 'REJECTED', providerStatus: 'PENDING_DELETION' },
  ARCHIVED: { status: 'REJECTED', providerStatus: 'ARCHIVED' },
  LIMIT_EXCEEDED: { status: 'REJECTED', providerStatus: 'LIMIT_EXCEEDED' },
  IN_APPEAL: { providerStatus: 'IN_APPEAL' },
  PENDING: { providerStatus: 'PENDING' },
};

function templateReason(value: Json, event: string, now: number): string | undefined {
  const rejection = object(value.rejection_info);
  const other = object(value.other_info);
  const disabled = object(value.disable_info);
  const details = [text(rejection?.reason), text(rejection?.recommendation), text(other?.title), text(other?.description)]
    .filter((detail): detail is string => detail !== undefined);
  if (disabled !== undefined) details.push(`Disabled on ${new Date(millisOf(disabled.disable_date, now)).toISOString().slice(0, 10)}.`);
  const reason = text(value.reason);
  if (event === 'APPROVED' || event === 'REINSTATED') return details.length > 0 ? details.join(' ') : undefined;
  return rejectionReason(reason, event, details);
}

function templateUpdate(value: Json, businessAccountId: string | undefined, occurredAt: number, now: number): TemplateStatusUpdate | undefined {
  const providerTemplateId = text(value.message_template_id);
  const event = text(value.event);
  const known = event === undefined || !Object.hasOwn(TEMPLATE_EVENTS, event) ? undefined : TEMPLATE_EVENTS[event];
  if (providerTemplateId === undefined || known === undefined) return undefined;
  const reason = templateReason(value, event!, now);
  return { providerTemplateId, businessAccountId, ...known, ...(reason !== undefined && { reason }), occurredAt };
}

function categoryUpdate(value: Json, businessAccountId: string | undefined, occurredAt: number, now: number): TemplateCategoryUpdate | undefined {
  const providerTemplateId = text(value.message_template_id);
  const category = text(value.new_category);
  if (providerTemplateId === undefined || category === undefined) return undefined;
  const correct = text(value.correct_category);
  // An announcement: `new_category` is the current one, `correct_category` the coming one.
  const upcoming =
    correct !== undefined && correct !== category
      ? { category: correct, effectiveAt: millisOf(value.category_update_timestamp, now, now + 24 * 3600_000, now + MAX_ANNOUNCED_AHEAD_MS) }
      : undefined;
  return { providerTemplateId, businessAccountId, category, ...(upcoming && { upcoming }), occurredAt };
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
/** A market's name as Meta's rate cards write them (letters, digits, spaces and a little punctuation). */
const MARKET = /^[\p{L}\p{N}][\p{L}\p{N} .,'&()/-]{0,63}$/u;
const PRICING_CATEGORY = /^[a-z_]{1,40}$/;
/** Meta announces a tier for the month it is reached in: a month further ahead than the next is not believed. */
const MAX_MONTH_AHEAD_MS = 62 * 24 * 3600_000;

function volumeTierUpdate(value: Json, businessAccountId: string | undefined, now: number): VolumeTierUpdate | undefined {
  const info = object(value.volume_tier_info);
  if (businessAccountId === undefined || info === undefined) return undefined;
  const market = typeof info.region === 'string' ? info.region.trim() : undefined;
  const category = cardCategory(text(info.pricing_category) ?? '');
  const tier = text(info.tier)?.trim().toUpperCase();
  const month = text(info.effective_month);
  const tierLower = tier === undefined ? undefined : tierLowerBound(tier);
  if (market === undefined || !MARKET.test(market) || !PRICING_CATEGORY.test(category) || tierLower === undefined) return undefined;
  if (month === undefined || !MONTH.test(month)) return undefined;
  const monthStart = Date.parse(`${month}-01T00:00:00.000Z`);
  if (monthStart > now + MAX_MONTH_AHEAD_MS) return undefined;
  const reachedAt = millisOf(info.tier_update_time, now, monthStart);
  return { businessAccountId, market, category, tier: tier!, tierLower, month, effectiveFrom: Math.max(monthStart, reachedAt) };
}

/** Every report a webhook carries; anything unrecognised — another product's object, an unknown field — is skipped. */
export function reportsOf(payload: unknown, now = Date.now()): WebhookReports {
  const reports: WebhookReports = { messages: [], templates: [], categories: [], accountChanges: [], volumeTiers: [] };
  const root = object(payload);
  if (root === undefined || root.object !== 'whatsapp_business_account') return reports;
  for (const entry of objects(root.entry)) {
    const businessAccountId = text(entry.id);
    const occurredAt = millisOf(entry.time, now);
    for (const change of objects(entry.changes)) {
      const value = object(change.value);
      if (value === undefined) continue;
      switch (change.field) {
        case 'messages':
          reports.messages.push(...messageReports(value, now));
          break;
        case 'message_template_status_update': {
          const update = templateUpdate(value, businessAccountId, occurredAt, now);
          if (update) reports.templates.push(update);
          break;
        }
        case 'template_category_update': {
          const update = categoryUpdate(value, businessAccountId, occurredAt, now);
          if (update) reports.categories.push(update);
          break;
        }
        case 'phone_number_quality_update':
          if (businessAccountId !== undefined) reports.accountChanges.push(businessAccountId);
          break;
        case 'account_update': {
          // Other account events (violations, partner changes, …) change nothing svc keeps.
          const update = value.event === 'VOLUME_BASED_PRICING_TIER_UPDATE' ? volumeTierUpdate(value, businessAccountId, now) : undefined;
          if (update) reports.volumeTiers.push(update);
          break;
        }
      }
    }
  }
  return reports;
}
