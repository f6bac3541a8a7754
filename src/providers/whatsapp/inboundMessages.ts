import {
  e164Of,
  type InboundMessage,
  type MarketingPreference,
  MAX_REPLY_TEXT,
  type Reply,
  type UserIdChange,
} from '../../domain/inboundMessages.ts';
import { isBusinessScopedUserId } from '../../domain/messageRequest.ts';
import { recipientOf } from './webhook.ts';
import { MAX_CLOCK_SKEW_MS } from '../../domain/reportedTime.ts';
import { type Json, object, objects, text } from './json.ts';

// Meta's webhook, the recipients' side: the `messages` field's inbound `messages` (webhooks
// reference, messages: text, button, interactive) and the `user_preferences` field (marketing
// messages stopped or resumed). Pure: no I/O. Statuses stay with webhook.ts.

export interface InboundReports {
  messages: InboundMessage[];
  preferences: MarketingPreference[];
  /** `user_changed_user_id` system messages. */
  userIdChanges: UserIdChange[];
}

/** The sender as svc keys it: the phone when Meta gives one, else the BSUID; and the BSUID beside a phone. */
function senderOf(waId: string | undefined, userId: string | undefined): { from: string; fromUserId?: string } | undefined {
  const known = recipientOf(waId, userId);
  if (known === undefined) return undefined;
  if (known.phone === undefined) return { from: known.userId! };
  return { from: known.phone, ...(known.userId !== undefined && { fromUserId: known.userId }) };
}

/** "User Ana changed from US.123 to US.456": the old and new ids, when the body says so. */
const CHANGED_FROM_TO = /changed from (\S+) to (\S+?)\.?$/;

function userIdChangeOf(message: Json, phoneNumberId: string, now: number): UserIdChange | undefined {
  const system = object(message.system);
  if (message.type !== 'system' || system?.type !== 'user_changed_user_id') return undefined;
  const newUserId = text(system.user_id);
  if (newUserId === undefined || !isBusinessScopedUserId(newUserId)) return undefined;
  const stated = CHANGED_FROM_TO.exec(text(system.body) ?? '')?.[1];
  const oldUserId = [text(message.from_user_id), stated].find(
    (candidate) => candidate !== undefined && candidate !== newUserId && isBusinessScopedUserId(candidate),
  );
  const phone = e164Of(text(system.wa_id) ?? '') ?? e164Of(text(message.from) ?? '');
  return {
    phoneNumberId,
    ...(oldUserId !== undefined && { oldUserId }),
    newUserId,
    ...(phone !== undefined && { phone }),
    occurredAt: millisOf(message.timestamp, now),
  };
}

/** Unix seconds (a string in messages, a number in user_preferences); now when missing, unreadable or ahead. */
function millisOf(seconds: unknown, now: number): number {
  if (typeof seconds !== 'string' && typeof seconds !== 'number') return now;
  const value = Number(seconds);
  if (!Number.isFinite(value) || value <= 0) return now;
  return Math.min(value * 1000, now + MAX_CLOCK_SKEW_MS);
}

function clipped(value: string): string {
  return value.length > MAX_REPLY_TEXT ? value.slice(0, MAX_REPLY_TEXT) : value;
}

/**
 * What svc reads of an inbound message: a quick-reply tap on a template (`button`: text and
 * payload), an interactive reply button (`interactive.button_reply`: title and id), or a text.
 */
function replyOf(message: Json): Reply | undefined {
  switch (message.type) {
    case 'text': {
      const body = text(object(message.text)?.body);
      return body === undefined ? undefined : { type: 'text', text: clipped(body) };
    }
    case 'button': {
      const button = object(message.button);
      const label = text(button?.text) ?? text(button?.payload);
      if (label === undefined) return undefined;
      const payload = text(button?.payload);
      return { type: 'button', text: clipped(label), ...(payload !== undefined && { payload: clipped(payload) }) };
    }
    case 'interactive': {
      const interactive = object(message.interactive);
      const button = object(interactive?.button_reply);
      const title = text(button?.title) ?? text(button?.id);
      if (interactive?.type !== 'button_reply' || title === undefined) return undefined;
      const id = text(button?.id);
      return { type: 'button', text: clipped(title), ...(id !== undefined && { payload: clipped(id) }) };
    }
    default:
      return undefined;
  }
}

function inboundMessages(value: Json, now: number): InboundMessage[] {
  const phoneNumberId = text(object(value.metadata)?.phone_number_id);
  if (phoneNumberId === undefined) return [];
  const found: InboundMessage[] = [];
  for (const message of objects(value.messages)) {
    // A user who hides the number behind a username writes with `from` empty and `from_user_id`.
    const sender = senderOf(text(message.from), text(message.from_user_id));
    const providerMessageId = text(message.id);
    if (sender === undefined || providerMessageId === undefined) continue;
    const inReplyTo = text(object(message.context)?.id);
    const reply = replyOf(message);
    found.push({
      phoneNumberId,
      ...sender,
      providerMessageId,
      ...(inReplyTo !== undefined && { inReplyTo }),
      ...(reply !== undefined && { reply }),
      occurredAt: millisOf(message.timestamp, now),
    });
  }
  return found;
}

function userIdChanges(value: Json, now: number): UserIdChange[] {
  const phoneNumberId = text(object(value.metadata)?.phone_number_id);
  if (phoneNumberId === undefined) return [];
  return objects(value.messages).flatMap((message) => userIdChangeOf(message, phoneNumberId, now) ?? []);
}

function preferencesOf(value: Json, now: number): MarketingPreference[] {
  const phoneNumberId = text(object(value.metadata)?.phone_number_id);
  if (phoneNumberId === undefined) return [];
  const found: MarketingPreference[] = [];
  for (const preference of objects(value.user_preferences)) {
    const sender = senderOf(text(preference.wa_id), text(preference.user_id));
    const choice = preference.value;
    if (sender === undefined || preference.category !== 'marketing_messages' || (choice !== 'stop' && choice !== 'resume')) continue;
    found.push({ phoneNumberId, ...sender, value: choice, occurredAt: millisOf(preference.timestamp, now) });
  }
  return found;
}

/** Every inbound message and preference change a notification carries; anything else is skipped. */
export function inboundReportsOf(payload: unknown, now = Date.now()): InboundReports {
  const reports: InboundReports = { messages: [], preferences: [], userIdChanges: [] };
  const root = object(payload);
  if (root === undefined || root.object !== 'whatsapp_business_account') return reports;
  for (const entry of objects(root.entry)) {
    for (const change of objects(entry.changes)) {
      const value = object(change.value);
      if (value === undefined) continue;
      if (change.field === 'messages') {
        reports.messages.push(...inboundMessages(value, now));
        reports.userIdChanges.push(...userIdChanges(value, now));
      }
      else if (change.field === 'user_preferences') reports.preferences.push(...preferencesOf(value, now));
    }
  }
  return reports;
}
