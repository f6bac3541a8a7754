// The seam between svc and a messaging provider (the sandbox, or the WhatsApp Cloud API).
//
// Glossary
// - submission: one attempt to hand a message (or a template) to the provider.
// - outcome:    what the provider answered to a submission: accepted, or a transient or a
//               permanent failure.
// - report:     the provider telling us, later, that a template was reviewed or a message's
//               status changed. Every report enters svc through one function, ProviderInbound.

import type { MessageStatus, TemplateStatus } from '../db/tables.ts';

export interface ProviderError {
  /** The provider's error code, as a string (e.g. "131026"). */
  code: string;
  title: string;
  message: string;
  /** Meta's trace id of the failed call, for a support escalation. */
  fbtraceId?: string;
}

export interface ProviderCredentials {
  phoneNumberId: string;
  accessToken: string;
}

export interface TemplateComponent {
  type: 'HEADER' | 'BODY' | 'FOOTER';
  format?: 'TEXT';
  text: string;
}

export interface TemplateSubmission {
  templateId: string;
  projectId: string;
  name: string;
  language: string;
  category: string;
  components: TemplateComponent[];
  /** Absent when the project has not saved credentials yet. */
  credentials: ProviderCredentials | undefined;
}

export type TemplateCheck =
  | { status: 'PENDING'; checkAgainAfterMs: number }
  | { status: 'APPROVED' }
  | { status: 'REJECTED'; reason: string };

export interface MessageSubmission {
  messageId: string;
  projectId: string;
  /** E.164 with the leading +. */
  to: string;
  templateName: string;
  language: string;
  /** Values for the BODY placeholders {{1}}…{{n}}, in order. */
  bodyParameters: string[];
  /** Values for the HEADER placeholder, if it has one. */
  headerParameters: string[];
  credentials: ProviderCredentials;
}

export type SendOutcome =
  | { kind: 'accepted'; providerMessageId: string }
  | { kind: 'transient'; error: ProviderError; retryAfterMs?: number }
  | { kind: 'permanent'; error: ProviderError };

export type ProviderReport =
  | {
      kind: 'template';
      templateId: string;
      status: Exclude<TemplateStatus, 'PENDING'>;
      reason?: string;
      occurredAt: number;
    }
  | {
      kind: 'message';
      providerMessageId: string;
      /** svc's message id, when the provider echoes it back (WhatsApp's biz_opaque_callback_data). */
      messageId?: string;
      status: Exclude<MessageStatus, 'QUEUED'>;
      occurredAt: number;
      error?: ProviderError;
    };

/**
 * What became of a report: applied; a duplicate or late report that changed nothing; or about a
 * message or template svc does not know (yet), which the provider should send again later.
 */
export type ReportResult = 'applied' | 'unchanged' | 'unknown';

/** svc's one entry point for everything a provider reports. */
export type ProviderInbound = (report: ProviderReport) => Promise<ReportResult>;

export interface Provider {
  readonly name: 'sandbox' | 'whatsapp';
  /** The longest one sendMessage call may take (its own timeout): claims are leased for longer. */
  readonly submissionTimeoutMs: number;
  /** Hands a new template to the provider for review; returns its id there, if any. */
  submitTemplate(template: TemplateSubmission): Promise<{ providerTemplateId: string | null; checkAfterMs: number }>;
  /**
   * Asks how the review of a PENDING template stands (called when review_due_at passes).
   * `providerTemplateId` is null when the provider gives none, or when submitTemplate never
   * answered (it failed, or the process stopped first): the template may not have reached the
   * provider, which should then find it by name and language, or submit it again.
   */
  checkTemplate(template: TemplateSubmission & { providerTemplateId: string | null }): Promise<TemplateCheck>;
  /** Submits one message. Never throws for provider answers: they are outcomes. */
  sendMessage(message: MessageSubmission): Promise<SendOutcome>;
  /** Starts reporting (the sandbox's timers); reports go to `inbound`. Worker processes only. */
  start(inbound: ProviderInbound): void;
  stop(): Promise<void>;
}
