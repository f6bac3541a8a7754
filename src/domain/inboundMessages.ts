// What recipients send back to a project's number, in provider-neutral terms (CONTRACT §9):
// messages (a quick-reply tap, a text, perhaps in reply to one of ours) and marketing-preference
// changes. The provider's inbound parser makes these; svc's use cases record them.

/** A reply as svc shows it: a button tap (its text and payload) or a text. */
export interface Reply {
  type: 'button' | 'text';
  text: string;
  /** The tapped button's payload; never on a text reply. */
  payload?: string;
}

export interface InboundMessage {
  /** The provider's id of the project's number it was sent to. */
  phoneNumberId: string;
  /** The sender: E.164 with the leading +, or its business-scoped user id when the provider hides the number. */
  from: string;
  /** The sender's business-scoped user id, when the provider names it beside the phone in `from`. */
  fromUserId?: string;
  /** The provider's id of this inbound message (deduplicates the provider's retries). */
  providerMessageId: string;
  /** The provider's id of the message it answers (Meta's context.id), if any. */
  inReplyTo?: string;
  /** Its text or button; undefined for content svc does not read (media, reactions, …). */
  reply?: Reply;
  occurredAt: number;
}

/** The recipient stopped or resumed MARKETING messages from the number (Meta's user_preferences). */
export interface MarketingPreference {
  phoneNumberId: string;
  /** E.164, or the business-scoped user id when the provider hides the number. */
  from: string;
  /** The user's business-scoped user id, when the provider names it beside the phone in `from`. */
  fromUserId?: string;
  value: 'stop' | 'resume';
  occurredAt: number;
}

/** A provider's user id as E.164: Meta's `from`/`wa_id` are digits without the +. */
export function e164Of(number: string): string | undefined {
  const digits = number.startsWith('+') ? number.slice(1) : number;
  return /^[1-9][0-9]{7,14}$/.test(digits) ? `+${digits}` : undefined;
}

/**
 * A user's new business-scoped user id (Meta's `user_changed_user_id` system message, sent when
 * the user changes phone number): the old id's history belongs to the new one.
 */
export interface UserIdChange {
  phoneNumberId: string;
  /** The id it replaces, when the provider names it. */
  oldUserId?: string;
  newUserId: string;
  /** The user's (new) phone, E.164, when the provider names it. */
  phone?: string;
  occurredAt: number;
}

/** A reply's text, as stored and sent: at most this long (Meta's text messages reach 4096). */
export const MAX_REPLY_TEXT = 4096;
