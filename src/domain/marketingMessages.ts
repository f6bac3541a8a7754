// WhatsApp's Marketing Messages API (MM API): MARKETING templates sent through
// POST /{phone-number-id}/marketing_messages, with Meta's ad optimisations, instead of Cloud API's
// /messages. A project chooses per its onboarding at Meta:
// - off: every template goes through /messages (the default);
// - fallback: MARKETING templates go through /marketing_messages with `product_policy`
//   CLOUD_API_FALLBACK (Meta sends through Cloud API when the business is not onboarded);
// - strict: the same with STRICT (Meta refuses instead, e.g. 134102).
// The template's latest category decides (Meta re-categorises templates: template_category_update).

export const MARKETING_MESSAGES_MODES = ['off', 'fallback', 'strict'] as const;
export type MarketingMessagesMode = (typeof MARKETING_MESSAGES_MODES)[number];

/** Meta's `product_policy` of a /marketing_messages send. */
export type ProductPolicy = 'CLOUD_API_FALLBACK' | 'STRICT';

/** The API that took a message: Cloud API's /messages, or the Marketing Messages API. */
export type SendRoute = 'cloud_api' | 'marketing_messages';

/** The stored mode (null: never set) as the API shows it; an unknown value reads as off. */
export function marketingMessagesModeOf(stored: string | null | undefined): MarketingMessagesMode {
  return stored === 'fallback' || stored === 'strict' ? stored : 'off';
}

/** The product policy to send a template of this category with, or undefined for Cloud API's /messages. */
export function productPolicyFor(mode: MarketingMessagesMode, category: string): ProductPolicy | undefined {
  if (category !== 'MARKETING') return undefined;
  if (mode === 'fallback') return 'CLOUD_API_FALLBACK';
  if (mode === 'strict') return 'STRICT';
  return undefined;
}
