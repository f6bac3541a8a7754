import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { recordProviderTemplateId } from '../../db/templates.ts';
import type {
  MessageSubmission,
  Provider,
  ProviderCredentials,
  ProviderInbound,
  SendOutcome,
  TemplateCheck,
  TemplateSubmission,
} from '../provider.ts';
import { GraphClient, type GraphFailure, type GraphResult } from './client.ts';
import { classifyGraphFailure } from './errors.ts';
import {
  createTemplatePayload,
  type DebugTokenResponse,
  type GraphTemplate,
  type PhoneNumbersResponse,
  sendMessagePayload,
  type SendMessageResponse,
  TEMPLATE_FIELDS,
  templateCheckOf,
} from './payloads.ts';

const GRAPH_TIMEOUT_MS = 10_000;
/** Meta reviews most templates within minutes; its webhook usually settles them sooner. */
const FIRST_REVIEW_CHECK_MS = 60_000;
const REVIEW_RECHECK_MS = 5 * 60_000;
/** A template registered before the project saved credentials waits for them. */
const NO_CREDENTIALS_RECHECK_MS = 60_000;

/** A Graph call that failed where the caller cannot answer with an outcome (template review). */
export class GraphCallError extends Error {
  override name = 'GraphCallError';
  readonly failure: GraphFailure;
  constructor(what: string, failure: GraphFailure) {
    const detail = classifyGraphFailure(failure).error;
    super(`${what}: ${detail.code} ${detail.title} (${detail.message})`);
    this.failure = failure;
  }
}

function required<T>(result: GraphResult<T>, what: string): T {
  if (!result.ok) throw new GraphCallError(what, result.failure);
  return result.body;
}

/**
 * The WhatsApp Cloud API. Messages are sent with the project's phone number id and token;
 * templates are registered with the WhatsApp Business Account (WABA) that owns that number,
 * found through the token's granted scopes (debug_token), as Meta documents for onboarding.
 * Status reports arrive by Meta's webhook (http/routes/whatsappWebhook.ts), so there is nothing
 * to start; template reviews are also polled, so a missed webhook delays nothing for long.
 */
export class WhatsAppProvider implements Provider {
  readonly name = 'whatsapp';
  readonly submissionTimeoutMs: number;
  readonly #client: GraphClient;
  readonly #database: Database;
  readonly #logger: Logger;
  /** A phone number's WABA never changes: asked once per process. */
  readonly #businessAccounts = new Map<string, string>();

  constructor(settings: Config['whatsapp'], database: Database, logger: Logger, options: { timeoutMs?: number } = {}) {
    const timeoutMs = options.timeoutMs ?? GRAPH_TIMEOUT_MS;
    this.#client = new GraphClient({ graphUrl: settings.graphUrl, apiVersion: settings.apiVersion, timeoutMs });
    this.submissionTimeoutMs = timeoutMs;
    this.#database = database;
    this.#logger = logger.child({ provider: 'whatsapp' });
  }

  async sendMessage(message: MessageSubmission): Promise<SendOutcome> {
    const result = await this.#client.call<SendMessageResponse>({
      method: 'POST',
      path: `/${encodeURIComponent(message.credentials.phoneNumberId)}/messages`,
      accessToken: message.credentials.accessToken,
      body: sendMessagePayload(message),
    });
    if (!result.ok) return classifyGraphFailure(result.failure);
    const providerMessageId = result.body?.messages?.[0]?.id;
    if (typeof providerMessageId === 'string' && providerMessageId !== '') return { kind: 'accepted', providerMessageId };
    return {
      kind: 'transient',
      error: { code: 'provider_bad_response', title: 'Unexpected answer', message: 'The Graph API answered without a message id.' },
    };
  }

  async submitTemplate(template: TemplateSubmission): Promise<{ providerTemplateId: string | null; checkAfterMs: number }> {
    if (!template.credentials) return { providerTemplateId: null, checkAfterMs: NO_CREDENTIALS_RECHECK_MS };
    const businessAccountId = await this.#businessAccountOf(template.credentials);
    const created = await this.#createTemplate(businessAccountId, template);
    // Not taken (a name already used there, a refusal, an outage): the review check finds the
    // template by name and language, or submits it again and settles a refusal as REJECTED.
    if (!created.ok || typeof created.body?.id !== 'string') return { providerTemplateId: null, checkAfterMs: 0 };
    const check = templateCheckOf(created.body, FIRST_REVIEW_CHECK_MS);
    return { providerTemplateId: created.body.id, checkAfterMs: check.status === 'PENDING' ? FIRST_REVIEW_CHECK_MS : 0 };
  }

  async checkTemplate(template: TemplateSubmission & { providerTemplateId: string | null }): Promise<TemplateCheck> {
    const { credentials } = template;
    if (!credentials) return { status: 'PENDING', checkAgainAfterMs: NO_CREDENTIALS_RECHECK_MS };
    if (template.providerTemplateId !== null) {
      const found = await this.#client.call<GraphTemplate>({
        method: 'GET',
        path: `/${encodeURIComponent(template.providerTemplateId)}`,
        accessToken: credentials.accessToken,
        query: { fields: TEMPLATE_FIELDS },
      });
      if (found.ok) return templateCheckOf(found.body ?? {}, REVIEW_RECHECK_MS);
      const error = found.failure.kind === 'http' ? found.failure.error : undefined;
      // Graph's "object does not exist": deleted at Meta, it can never send.
      if (error?.code === 100 && error.error_subcode === 33) {
        return { status: 'REJECTED', reason: 'The template no longer exists at WhatsApp.' };
      }
      throw new GraphCallError('template status check failed', found.failure);
    }
    const businessAccountId = await this.#businessAccountOf(credentials);
    const existing = await this.#findTemplate(businessAccountId, template, credentials);
    if (existing?.id) {
      await recordProviderTemplateId(this.#database.db, template.templateId, existing.id);
      return templateCheckOf(existing, REVIEW_RECHECK_MS);
    }
    const created = await this.#createTemplate(businessAccountId, template);
    if (created.ok && typeof created.body?.id === 'string') {
      await recordProviderTemplateId(this.#database.db, template.templateId, created.body.id);
      return templateCheckOf(created.body, FIRST_REVIEW_CHECK_MS);
    }
    if (!created.ok) {
      const failure = classifyGraphFailure(created.failure);
      // Refused outright (invalid name, language, category or text): that is Meta's review.
      if (failure.kind === 'permanent') {
        return { status: 'REJECTED', reason: `${failure.error.title}: ${failure.error.message}` };
      }
      throw new GraphCallError('template submission failed', created.failure);
    }
    throw new Error('template submission answered without an id');
  }

  start(_inbound: ProviderInbound): void {
    // Reports arrive by webhook, through the HTTP server's provider inbound.
  }

  async stop(): Promise<void> {
    await this.#client.close();
  }

  async #createTemplate(businessAccountId: string, template: TemplateSubmission & { credentials?: ProviderCredentials }) {
    const result = await this.#client.call<GraphTemplate>({
      method: 'POST',
      path: `/${encodeURIComponent(businessAccountId)}/message_templates`,
      accessToken: template.credentials!.accessToken,
      body: createTemplatePayload(template),
    });
    if (!result.ok) {
      this.#logger.warn({ templateId: template.templateId, error: classifyGraphFailure(result.failure).error }, 'template submission refused');
    }
    return result;
  }

  async #findTemplate(
    businessAccountId: string,
    template: TemplateSubmission,
    credentials: ProviderCredentials,
  ): Promise<GraphTemplate | undefined> {
    const listed = required(
      await this.#client.call<{ data?: GraphTemplate[] }>({
        method: 'GET',
        path: `/${encodeURIComponent(businessAccountId)}/message_templates`,
        accessToken: credentials.accessToken,
        query: { name: template.name, fields: TEMPLATE_FIELDS, limit: '100' },
      }),
      'template lookup failed',
    );
    return listed?.data?.find((found) => found.name === template.name && found.language === template.language);
  }

  /** The WABA that owns the phone number, among those the token was granted. */
  async #businessAccountOf(credentials: ProviderCredentials): Promise<string> {
    const known = this.#businessAccounts.get(credentials.phoneNumberId);
    if (known !== undefined) return known;
    const debug = required(
      await this.#client.call<DebugTokenResponse>({
        method: 'GET',
        path: '/debug_token',
        accessToken: credentials.accessToken,
        query: { input_token: credentials.accessToken },
      }),
      'access token inspection failed',
    );
    const candidates =
      debug?.data?.granular_scopes?.find((scope) => scope.scope === 'whatsapp_business_management')?.target_ids ?? [];
    let found: string | undefined = candidates.length === 1 ? candidates[0] : undefined;
    for (const candidate of candidates.length > 1 ? candidates : []) {
      const numbers = required(
        await this.#client.call<PhoneNumbersResponse>({
          method: 'GET',
          path: `/${encodeURIComponent(candidate)}/phone_numbers`,
          accessToken: credentials.accessToken,
          query: { fields: 'id', limit: '100' },
        }),
        'phone number lookup failed',
      );
      if (numbers?.data?.some((number) => number.id === credentials.phoneNumberId)) {
        found = candidate;
        break;
      }
    }
    if (found === undefined) {
      throw new Error(
        `no WhatsApp Business Account with phone number ${credentials.phoneNumberId} was granted to the token ` +
          '(whatsapp_business_management)',
      );
    }
    this.#businessAccounts.set(credentials.phoneNumberId, found);
    return found;
  }
}
