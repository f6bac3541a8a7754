// The seam between svc and a messaging provider (the sandbox, or the WhatsApp Cloud API).
//
// Glossary
// - submission: one attempt to hand a message (or a template) to the provider.
// - outcome:    what the provider answered to a submission: accepted, or a transient or a
//               permanent failure.
// - report:     the provider telling us, later, that a template was reviewed (or paused,
//               re-categorised…) or a message's status changed. Every report enters svc through
//               one function, ProviderInbound.
// - account:    what the provider says about the project's sending number and business account
//               (checked when credentials are saved, then refreshed): its names, quality,
//               throughput, and any problem the customer must fix.
// - provider status: the provider's own state of a template (Meta's APPROVED, PAUSED, DISABLED,
//               FLAGGED…), finer than svc's PENDING/APPROVED/REJECTED review status.

import type { FastifyInstance } from 'fastify';
import type { MessageStatus } from '../db/tables.ts';
import type { ProductPolicy, SendRoute } from '../domain/marketingMessages.ts';
import type { MessagePricing } from '../domain/pricing.ts';
import type { InboundMessage, MarketingPreference, UserIdChange } from '../domain/inboundMessages.ts';
import type { ParameterRule } from '../domain/messageRequest.ts';

export interface ProviderError {
  /** The provider's error code, as a string (e.g. "131026"). */
  code: string;
  title: string;
  message: string;
  /** Meta's trace id of the failed call, for a support escalation. */
  fbtraceId?: string;
}

/**
 * A project's credentials in svc's neutral shape: what identifies its sender at the provider, and
 * the secret that authenticates it (sealed at rest with the secret box, never logged or returned).
 * Only the provider reads meaning into them (WhatsApp: phone number id and access token,
 * whatsapp/credentials.ts); svc keys send lanes and report lookups on `sender`.
 */
/**
 * What a provider's error code means to svc, when it means more than the failure: the recipient
 * cannot get messages (suppressed with SVC_AUTO_SUPPRESS), stopped marketing messages (suppressed
 * for MARKETING, always), or the provider dropped a message it held for quality assessment (a
 * burst of them on one number raises an operator alert: workers/heldMessages.ts).
 */
export type ErrorClass = 'recipient_unreachable' | 'marketing_stopped' | 'held_dropped';

/** The provider's error classification: what its code means, if anything. */
export type ErrorClassOf = (code: string) => ErrorClass | undefined;

export interface ProviderCredentials {
  readonly sender: string;
  readonly secret: string;
}

/** A named parameter's example value, in Meta's shape. */
export interface NamedParameterExample {
  param_name: string;
  example: string;
}

/** Example values for a component's placeholders (or its media sample), in Meta's shape. */
export interface ComponentExample {
  header_text?: string[];
  body_text?: string[][];
  header_text_named_params?: NamedParameterExample[];
  body_text_named_params?: NamedParameterExample[];
  /** A media HEADER's sample: a handle from the provider's upload. */
  header_handle?: string[];
  /** A media HEADER's sample: an https URL svc downloads and uploads to the provider itself. */
  header_url?: string[];
}

/** POSITIONAL: placeholders {{1}}, {{2}}…; NAMED: {{first_name}}… */
export type ParameterFormat = 'POSITIONAL' | 'NAMED';

export type MediaFormat = 'IMAGE' | 'VIDEO' | 'DOCUMENT';

/** A HEADER without text: a media sample, or a location given at each send. */
export interface MediaHeaderComponent {
  type: 'HEADER';
  format: MediaFormat | 'LOCATION';
  example?: ComponentExample;
}

export interface TextComponent {
  type: 'HEADER' | 'BODY' | 'FOOTER';
  format?: 'TEXT';
  text: string;
  example?: ComponentExample;
  /** AUTHENTICATION BODY: add Meta's "For your security, do not share this code." */
  add_security_recommendation?: boolean;
  /** AUTHENTICATION FOOTER: "This code expires in N minutes." */
  code_expiration_minutes?: number;
}

/** The one-time-password button of an AUTHENTICATION template (Meta's `OTP` button). */
export interface OtpButton {
  type: 'OTP';
  otp_type: string;
  text?: string;
  autofill_text?: string;
  supported_apps?: { package_name: string; signature_hash: string }[];
}

/** The buttons of UTILITY and MARKETING templates, in Meta's shape. */
export type TemplateButton =
  | { type: 'QUICK_REPLY'; text: string }
  /** `url` may end in one `{{1}}`, filled at each send; `example` then holds a sample value. */
  | { type: 'URL'; text: string; url: string; example?: string[] }
  | { type: 'PHONE_NUMBER'; text: string; phone_number: string }
  /** `example`: a sample coupon code; the code itself is given at each send. */
  | { type: 'COPY_CODE'; example: string };

export interface ButtonsComponent {
  type: 'BUTTONS';
  buttons: (OtpButton | TemplateButton)[];
}

export type TemplateComponent = TextComponent | MediaHeaderComponent | ButtonsComponent;

/** A media HEADER's sample as svc downloaded it (header_url), for the provider to upload. */
export interface MediaSample {
  url: string;
  contentType: string;
  bytes: Uint8Array;
}

export interface TemplateSubmission {
  templateId: string;
  projectId: string;
  name: string;
  language: string;
  category: string;
  components: TemplateComponent[];
  /** Absent: POSITIONAL. */
  parameterFormat?: ParameterFormat;
  /** The media HEADER's sample when svc downloaded it just now (header_url); else fetched again when needed. */
  mediaSample?: MediaSample;
  /** Absent when the project has not saved credentials yet. */
  credentials: ProviderCredentials | undefined;
  /** The business account (WABA) templates belong to; null until it is known. */
  businessAccountId: string | null;
}

export type TemplateCheck = (
  | { status: 'PENDING'; checkAgainAfterMs: number }
  | { status: 'APPROVED'; providerStatus?: string }
  | { status: 'REJECTED'; reason: string; providerStatus?: string }
) & {
  /** The template's id at the provider when this check found or submitted it anew: svc records it. */
  providerTemplateId?: string;
};

/** What became of a template deletion at the provider. */
export type TemplateDeletion =
  | { kind: 'deleted' }
  /** The provider has no such template (never submitted, or already gone). */
  | { kind: 'absent' }
  | { kind: 'refused'; error: ProviderError }
  | { kind: 'unavailable'; error: ProviderError };

export interface MessageSubmission {
  messageId: string;
  projectId: string;
  /** E.164 with the leading +. */
  to: string;
  templateName: string;
  language: string;
  /**
   * The template's category when the message was accepted. AUTHENTICATION is fixed (Meta
   * re-categorises only between UTILITY and MARKETING), and its OTP button needs the code.
   */
  category: string;
  /**
   * Send through WhatsApp's Marketing Messages API with this product policy (the project's setting,
   * for a template that is MARKETING now); absent: Cloud API.
   */
  productPolicy?: ProductPolicy;
  /** Values for the BODY placeholders {{1}}…{{n}}, in order. */
  bodyParameters: string[];
  /** Values for the HEADER placeholder, if it has one. */
  headerParameters: string[];
  /** NAMED templates: the name of each body and header value, in the same order. */
  bodyParameterNames?: string[];
  headerParameterNames?: string[];
  /** What a rich template adds (named parameters, a media or location header, buttons); absent for the spec's templates. */
  rich?: RichSendParameters;
  credentials: ProviderCredentials;
}

/**
 * The parameters of a rich template message, resolved against its template when it was accepted
 * (stored with the message, so the dispatcher needs no template).
 */
export interface RichSendParameters {
  /** NAMED: body and header values are sent with their names (the message's variables in their order). */
  named?: boolean;
  header?:
    | { type: 'image' | 'video' | 'document'; link: string; filename?: string }
    | { type: 'location'; latitude: number; longitude: number; name?: string; address?: string };
  buttons?: RichButtonParameter[];
}

export type RichButtonParameter =
  | { subType: 'url'; index: string; text: string }
  | { subType: 'quick_reply'; index: string; payload: string }
  | { subType: 'copy_code'; index: string; couponCode: string };

export type SendOutcome =
  | {
      kind: 'accepted';
      providerMessageId: string;
      /** What it costs, when the provider says so at acceptance (the sandbox). */
      pricing?: MessagePricing;
      /** The API that took it (WhatsApp: Cloud API or the Marketing Messages API). */
      route?: SendRoute;
      /**
       * Taken but held back for quality assessment (Meta's portfolio pacing:
       * `message_status: held_for_quality_assessment`): not sent until released.
       */
      held?: boolean;
    }
  | { kind: 'transient'; error: ProviderError; retryAfterMs?: number }
  | { kind: 'permanent'; error: ProviderError };

export interface PricingAnalyticsQuery {
  credentials: ProviderCredentials;
  businessAccountId: string;
  /** Epoch ms, [from, to). */
  from: number;
  to: number;
}

/** One of Meta's daily pricing_analytics data points (cost in the WABA's currency). */
export interface PricingAnalyticsPoint {
  start: number;
  end: number;
  country: string;
  pricingType: string;
  pricingCategory: string;
  volume: number;
  cost: number;
}

export type PricingAnalyticsResult =
  | { kind: 'ok'; points: PricingAnalyticsPoint[] }
  | { kind: 'unavailable' | 'refused'; error: ProviderError };

/** What the customer must do before the provider works fully, with a stable code. */
export interface AccountProblem {
  code: string;
  message: string;
}

export interface ProviderAccount {
  businessAccountId: string | null;
  displayPhoneNumber: string | null;
  verifiedName: string | null;
  /** GREEN, YELLOW, RED or NA (Meta's quality rating). */
  qualityRating: string | null;
  /** The number's throughput; null when the provider does not say (SVC_PROVIDER_MAX_MPS applies). */
  messagesPerSecond: number | null;
  /** Whether the provider sends this account's status reports to svc. */
  webhooksSubscribed: boolean;
  problem: AccountProblem | null;
  /** The currency the provider bills the account in (ISO 4217); null or absent: unknown (SVC_RATE_CARD_CURRENCY). */
  currency?: string | null;
}

export interface AccountQuery {
  credentials: ProviderCredentials;
  /** Given by the customer, or known from an earlier check; otherwise the provider finds it. */
  businessAccountId: string | null;
  /** True when an earlier check found or verified `businessAccountId`: it is trusted as it is. */
  businessAccountKnown: boolean;
}

export type AccountCheck =
  | { kind: 'checked'; account: ProviderAccount }
  /**
   * The provider refused the credentials themselves: `code` says which part (token_rejected,
   * phone_number_rejected, missing_permission) and `reason` what to do.
   */
  | { kind: 'rejected'; code: string; reason: string; error: ProviderError }
  /** The provider could not be asked (outage, timeout): try again later. */
  | { kind: 'unavailable'; error: ProviderError };

export type ProviderReport =
  | {
      kind: 'template';
      templateId: string;
      /** The review outcome, settling a PENDING template; absent when the report settles nothing. */
      status?: 'APPROVED' | 'REJECTED';
      /** The provider's own status (defaults to `status`): PAUSED, DISABLED, FLAGGED, … */
      providerStatus?: string;
      reason?: string;
      occurredAt: number;
    }
  | {
      kind: 'template_category';
      templateId: string;
      /** The category it has now (a completed change), or keeps until `effectiveAt`. */
      category: string;
      /** A change announced ahead: the category it will get at `effectiveAt`. */
      upcoming?: { category: string; effectiveAt: number };
      occurredAt: number;
    }
  /** A WABA reached a volume tier for a market and pricing category in a month (Meta's account_update). */
  | ({ kind: 'volume_tier' } & VolumeTierUpdate)
  | {
      kind: 'message';
      providerMessageId: string;
      /** svc's message id, when the provider echoes it back (WhatsApp's biz_opaque_callback_data). */
      messageId?: string;
      /** The sending number the provider names; a report about another project's number is ignored. */
      phoneNumberId?: string;
      status: Exclude<MessageStatus, 'QUEUED'>;
      occurredAt: number;
      error?: ProviderError;
      /** What the message costs (Meta's `pricing` on sent, delivered and read statuses). */
      pricing?: MessagePricing;
      /** The recipient's identities the provider names (Meta: `recipient_id`, `recipient_user_id`). */
      recipient?: RecipientIdentities;
    };

/** A WhatsApp user's identities as a provider names them: phone (E.164) and business-scoped user id. */
export interface RecipientIdentities {
  phone?: string;
  userId?: string;
}

/**
 * What became of a report: applied; a duplicate or late report that changed nothing; or about a
 * message or template svc does not know (yet), which the provider should send again later.
 */
export type ReportResult = 'applied' | 'unchanged' | 'unknown';

/** svc's one entry point for everything a provider reports. */
export type ProviderInbound = (report: ProviderReport) => Promise<ReportResult>;

/**
 * What svc offers a provider's inbound routes (its webhook): the report entry point, and the few
 * lookups and records a report needs. svc owns it (messages/providerInbox.ts), so a provider never
 * reads or writes svc's tables itself.
 */
export interface ProviderInbox {
  report: ProviderInbound;
  /** Which of these senders (ProviderCredentials.sender) a project here sends from. */
  sendersHere(senders: readonly string[]): Promise<Set<string>>;
  /** svc's ids of the templates a provider's template report names (its id, in its business account). */
  templatesNamed(providerTemplateId: string, businessAccountId: string | undefined): Promise<string[]>;
  /** A business account changed (throughput…): its projects' accounts are checked again at once. */
  accountChanged(businessAccountIds: readonly string[]): Promise<void>;
  /** A recipient's message (a reply, an opt-out keyword), their marketing preference, their new user id. */
  inboundMessage(message: InboundMessage): Promise<unknown>;
  marketingPreference(preference: MarketingPreference): Promise<unknown>;
  userIdChange(change: UserIdChange): Promise<unknown>;
}

export interface Provider {
  /** Its name in the provider registry (SVC_PROVIDER). */
  readonly name: string;
  /** The longest one sendMessage call may take (its own timeout): claims are leased for longer. */
  readonly submissionTimeoutMs: number;
  /**
   * Whether a media sample given by URL (example.header_url) can reach the provider: the sandbox
   * only checks it; WhatsApp uploads it through the app SVC_WHATSAPP_APP_ID names. Absent: true.
   */
  readonly takesSampleUrls?: boolean;
  /** What the provider refuses in a template parameter value, checked at send (400 provider_rule). Absent: any value. */
  readonly parameterRule?: ParameterRule;
  /** Which of its error codes mean something to svc (suppressions). Absent: none. */
  readonly errorClassOf?: ErrorClassOf;
  /** Checks credentials and describes the sending account (PUT credentials, periodic refresh). */
  checkAccount(query: AccountQuery): Promise<AccountCheck>;
  /** Hands a new template to the provider for review; returns its id there, if any. */
  submitTemplate(template: TemplateSubmission): Promise<{ providerTemplateId: string | null; checkAfterMs: number }>;
  /**
   * Asks how the review of a PENDING template stands (called when review_due_at passes).
   * `providerTemplateId` is null when the provider gives none, or when submitTemplate never
   * answered (it failed, or the process stopped first): the template may not have reached the
   * provider, which should then find it by name and language, or submit it again.
   */
  checkTemplate(template: TemplateSubmission & { providerTemplateId: string | null }): Promise<TemplateCheck>;
  /** Deletes a template at the provider (DELETE /v1/templates/{id}). */
  deleteTemplate(template: TemplateSubmission & { providerTemplateId: string | null }): Promise<TemplateDeletion>;
  /** Submits one message. Never throws for provider answers: they are outcomes. */
  sendMessage(message: MessageSubmission): Promise<SendOutcome>;
  /**
   * The HTTP routes the provider owns (WhatsApp: Meta's webhook), registered by the HTTP server in
   * a scope of their own; every lookup and record goes through svc's `inbox`. Absent: none.
   */
  readonly inboundRoutes?: (app: FastifyInstance, inbox: ProviderInbox) => Promise<void>;
  /** Starts reporting (the sandbox's timers); reports go to `inbound`. Worker processes only. */
  start(inbound: ProviderInbound): void;
  stop(): Promise<void>;
  /** What the provider itself says the account was charged (WhatsApp: pricing_analytics); absent when it cannot say. */
  pricingAnalytics?(query: PricingAnalyticsQuery): Promise<PricingAnalyticsResult>;
}

/** A WABA's volume tier for one market and pricing category, in one month. */
export interface VolumeTierUpdate {
  businessAccountId: string;
  /** The rate card's market (Meta's `region`: India, North America, …). */
  market: string;
  /** The rate card's category (Meta's `pricing_category`: UTILITY → utility). */
  category: string;
  /** `LOWER:UPPER` messages in the month, as Meta and the rate card write it. */
  tier: string;
  tierLower: number;
  /** `YYYY-MM` (UTC). */
  month: string;
  /** From when messages are priced at it (Meta's `tier_update_time`, not before the month's start). */
  effectiveFrom: number;
}
