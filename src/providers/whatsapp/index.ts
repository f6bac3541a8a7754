import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { SendRoute } from '../../domain/marketingMessages.ts';
import { isBusinessScopedUserId } from '../../domain/messageRequest.ts';
import type {
  AccountCheck,
  AccountQuery,
  MessageSubmission,
  PricingAnalyticsQuery,
  PricingAnalyticsResult,
  Provider,
  ProviderInbound,
  ProviderInbox,
  SendOutcome,
  TemplateCheck,
  TemplateDeletion,
  TemplateSubmission,
} from '../provider.ts';
import { isMediaFormat, mediaHeaderOf } from '../../domain/templates.ts';
import { DownloadError } from '../../net/guardedDownload.ts';
import { loadMediaSample } from '../../net/mediaSample.ts';
import { checkAccount } from './account.ts';
import { whatsappCredentials } from './credentials.ts';
import { whatsappWebhookRoutes } from './webhookRoutes.ts';
import { pricingAnalytics } from './pricingAnalytics.ts';
import { GraphClient, type GraphFailure, type GraphResult } from './client.ts';
import { graphVersionWarning } from './graphVersions.ts';
import { classifyGraphFailure, graphFailureError, isGraphOutage } from './errors.ts';
import {
  createTemplatePayload,
  type GraphTemplate,
  sameTemplate,
  sendMessagePayload,
  type SendMessageResponse,
  TEMPLATE_FIELDS,
  templateCheckOf,
} from './payloads.ts';
import { whatsappParameterRule } from './parameterRule.ts';
import { whatsappErrorClass } from './errorClasses.ts';

const GRAPH_TIMEOUT_MS = 10_000;
/** The send answer's `messages[0].message_status` for a message held by portfolio pacing (else `accepted`). */
const HELD_FOR_QUALITY_ASSESSMENT = 'held_for_quality_assessment';
/** Meta reviews most templates within minutes; its webhook usually settles them sooner. */
const FIRST_REVIEW_CHECK_MS = 60_000;
const REVIEW_RECHECK_MS = 5 * 60_000;
/** A template registered before the project saved credentials (or before its account is known) waits for them. */
const NO_ACCOUNT_RECHECK_MS = 60_000;

/**
 * A business-scoped user id goes in `recipient` (Meta, 2026: `to` is for phone numbers, and wins
 * when both are given); a phone number stays in `to`.
 */
function addressed<T extends { to: string }>(payload: T): Omit<T, 'to'> & { to?: string; recipient?: string } {
  if (!isBusinessScopedUserId(payload.to)) return payload;
  const { to, ...rest } = payload;
  return { ...rest, recipient: to };
}

/** A Graph call that failed where the caller cannot answer with an outcome (template review). */
export class GraphCallError extends Error {
  override name = 'GraphCallError';
  readonly failure: GraphFailure;
  constructor(what: string, failure: GraphFailure) {
    const detail = graphFailureError(failure);
    super(`${what}: ${detail.code} ${detail.title} (${detail.message})`);
    this.failure = failure;
  }
}

function required<T>(result: GraphResult<T>, what: string): T {
  if (!result.ok) throw new GraphCallError(what, result.failure);
  return result.body;
}

type WithProviderId = TemplateSubmission & { providerTemplateId: string | null };

/**
 * The WhatsApp Cloud API. Messages are sent with the project's phone number id and token;
 * templates are registered with the WhatsApp Business Account (WABA) that owns that number, found
 * or verified when the credentials are saved (account.ts). Status reports arrive by Meta's
 * webhook (webhookRoutes.ts, its inbound routes), so there is nothing to start; template reviews are
 * also polled, so a missed webhook delays nothing for long.
 */
export class WhatsAppProvider implements Provider {
  readonly name = 'whatsapp';
  readonly parameterRule = whatsappParameterRule;
  readonly errorClassOf = whatsappErrorClass;
  readonly submissionTimeoutMs: number;
  readonly takesSampleUrls: boolean;
  readonly #client: GraphClient;
  readonly #webhook: Pick<Config['whatsapp'], 'appSecret' | 'verifyToken'>;
  readonly #logger: Logger;
  readonly #appId: string | undefined;
  readonly #allowPrivateSamples: boolean;

  constructor(
    settings: Config['whatsapp'],
    logger: Logger,
    options: { timeoutMs?: number; allowPrivateSamples?: boolean; now?: () => number } = {},
  ) {
    const timeoutMs = options.timeoutMs ?? GRAPH_TIMEOUT_MS;
    this.#client = new GraphClient({ graphUrl: settings.graphUrl, apiVersion: settings.apiVersion, timeoutMs });
    this.submissionTimeoutMs = timeoutMs;
    this.#appId = settings.appId;
    this.takesSampleUrls = settings.appId !== undefined;
    this.#allowPrivateSamples = options.allowPrivateSamples ?? false;
    this.#webhook = { appSecret: settings.appSecret, verifyToken: settings.verifyToken };
    this.#logger = logger.child({ provider: 'whatsapp' });
    // At start, so an operator hears of Meta's retirement of the version months before it happens.
    const warning = graphVersionWarning(settings.apiVersion, (options.now ?? Date.now)());
    if (warning !== undefined) this.#logger.warn({ graphApiVersion: settings.apiVersion }, warning);
  }

  checkAccount(query: AccountQuery): Promise<AccountCheck> {
    return checkAccount(this.#client, { ...query, credentials: whatsappCredentials(query.credentials) });
  }

  readonly inboundRoutes = (app: FastifyInstance, inbox: ProviderInbox) => whatsappWebhookRoutes(app, this.#webhook, inbox);

  async sendMessage(message: MessageSubmission): Promise<SendOutcome> {
    // Nothing awaited before the request: a send goes out in the pacing window it was granted.
    const codeButton = message.category === 'AUTHENTICATION';
    const policy = message.productPolicy;
    const route: SendRoute = policy === undefined ? 'cloud_api' : 'marketing_messages';
    const payload = addressed(sendMessagePayload(message, codeButton));
    const { phoneNumberId, accessToken } = whatsappCredentials(message.credentials);
    const result = await this.#client.call<SendMessageResponse>({
      method: 'POST',
      // The Marketing Messages API takes Cloud API's payload, plus the product policy.
      path: `/${encodeURIComponent(phoneNumberId)}/${policy === undefined ? 'messages' : 'marketing_messages'}`,
      accessToken,
      body: policy === undefined ? payload : { ...payload, product_policy: policy },
    });
    if (!result.ok) return classifyGraphFailure(result.failure);
    const [answer] = result.body?.messages ?? [];
    const providerMessageId = answer?.id;
    if (typeof providerMessageId === 'string' && providerMessageId !== '') {
      // Portfolio pacing: taken, but held until Meta releases it (a `sent` status) or drops it (132015).
      const held = answer?.message_status === HELD_FOR_QUALITY_ASSESSMENT;
      return { kind: 'accepted', providerMessageId, route, ...(held && { held }) };
    }
    return {
      kind: 'transient',
      error: { code: 'provider_bad_response', title: 'Unexpected answer', message: 'The Graph API answered without a message id.' },
    };
  }

  async submitTemplate(template: TemplateSubmission): Promise<{ providerTemplateId: string | null; checkAfterMs: number }> {
    if (!template.credentials || template.businessAccountId === null) {
      return { providerTemplateId: null, checkAfterMs: NO_ACCOUNT_RECHECK_MS };
    }
    const created = await this.#createTemplate(template.businessAccountId, template);
    // Not taken (a name already used there, a refusal, an outage): the review check finds the
    // template by name and language, or submits it again and settles a refusal as REJECTED.
    if (!created.ok || typeof created.body?.id !== 'string') return { providerTemplateId: null, checkAfterMs: 0 };
    const check = templateCheckOf(created.body, FIRST_REVIEW_CHECK_MS);
    return { providerTemplateId: created.body.id, checkAfterMs: check.status === 'PENDING' ? FIRST_REVIEW_CHECK_MS : 0 };
  }

  async checkTemplate(template: WithProviderId): Promise<TemplateCheck> {
    const { credentials, businessAccountId } = template;
    if (!credentials || businessAccountId === null) return { status: 'PENDING', checkAgainAfterMs: NO_ACCOUNT_RECHECK_MS };
    if (template.providerTemplateId !== null) {
      const found = await this.#client.call<GraphTemplate>({
        method: 'GET',
        path: `/${encodeURIComponent(template.providerTemplateId)}`,
        accessToken: whatsappCredentials(credentials).accessToken,
        query: { fields: TEMPLATE_FIELDS },
      });
      if (found.ok) return templateCheckOf(found.body ?? {}, REVIEW_RECHECK_MS);
      if (isGraphOutage(found.failure)) throw new GraphCallError('template status check failed', found.failure);
      // Refused (Meta answers "does not exist" with code 100): look for it by name and language.
    }
    const existing = await this.#findTemplate(businessAccountId, template);
    if (existing?.id) {
      if (!sameTemplate(existing, template)) {
        return {
          status: 'REJECTED',
          reason:
            `WhatsApp already has a template '${template.name}' (${template.language}) with other content (an older ` +
            'one, perhaps deleted in svc only): delete it in WhatsApp Manager, or register this one under another name.',
          providerStatus: 'REJECTED',
        };
      }
      return { ...templateCheckOf(existing, REVIEW_RECHECK_MS), providerTemplateId: existing.id };
    }
    if (template.providerTemplateId !== null) {
      return { status: 'REJECTED', reason: 'The template no longer exists at WhatsApp.', providerStatus: 'DELETED' };
    }
    const created = await this.#createTemplate(businessAccountId, template);
    if (created.ok && typeof created.body?.id === 'string') {
      return { ...templateCheckOf(created.body, FIRST_REVIEW_CHECK_MS), providerTemplateId: created.body.id };
    }
    if (!created.ok) {
      const failure = classifyGraphFailure(created.failure);
      // Refused outright (invalid name, language, category or text): that is Meta's review.
      if (failure.kind === 'permanent') {
        return { status: 'REJECTED', reason: `${failure.error.title}: ${failure.error.message}`, providerStatus: 'REJECTED' };
      }
      throw new GraphCallError('template submission failed', created.failure);
    }
    throw new Error('template submission answered without an id');
  }

  async deleteTemplate(template: WithProviderId): Promise<TemplateDeletion> {
    const { credentials, businessAccountId } = template;
    if (!credentials || businessAccountId === null) return { kind: 'absent' };
    let providerTemplateId = template.providerTemplateId;
    if (providerTemplateId === null) {
      // Perhaps submitted without the answer being recorded: look for it by name and language.
      try {
        const found = await this.#findTemplate(businessAccountId, template);
        providerTemplateId = found?.id && sameTemplate(found, template) ? found.id : null;
      } catch (error) {
        if (!(error instanceof GraphCallError)) throw error;
        const kind = isGraphOutage(error.failure) ? 'unavailable' : 'refused';
        return { kind, error: graphFailureError(error.failure) };
      }
      if (providerTemplateId === null) return { kind: 'absent' };
    }
    // By id (hsm_id) with its name: deleting by name alone would delete every language of it.
    const deleted = await this.#client.call<{ success?: boolean }>({
      method: 'DELETE',
      path: `/${encodeURIComponent(businessAccountId)}/message_templates`,
      accessToken: whatsappCredentials(credentials).accessToken,
      query: { hsm_id: providerTemplateId, name: template.name },
    });
    if (deleted.ok) return { kind: 'deleted' };
    const error = graphFailureError(deleted.failure);
    if (isGraphOutage(deleted.failure)) return { kind: 'unavailable', error };
    this.#logger.warn({ templateId: template.templateId, error }, 'template deletion refused by WhatsApp');
    return { kind: 'refused', error };
  }

  pricingAnalytics(query: PricingAnalyticsQuery): Promise<PricingAnalyticsResult> {
    return pricingAnalytics(this.#client, query);
  }

  start(_inbound: ProviderInbound): void {
    // Reports arrive by webhook, through the HTTP server's provider inbound.
  }

  async stop(): Promise<void> {
    await this.#client.close();
  }

  /**
   * The handle of a media sample svc must upload itself (given as example.header_url): the bytes
   * registration fetched, or fetched again now, sent with Meta's Resumable Upload API — a session
   * on the app (POST /{app-id}/uploads), then the bytes (POST /{upload-id}, `OAuth` token,
   * `file_offset: 0`), which answers the handle `h`. Undefined when there is nothing to upload.
   */
  async #uploadedSample(template: TemplateSubmission): Promise<GraphResult<string | undefined>> {
    const media = mediaHeaderOf(template.components);
    const url = media?.example?.header_url?.[0];
    if (!media || !isMediaFormat(media.format) || url === undefined || media.example?.header_handle !== undefined) {
      return { ok: true, status: 200, body: undefined };
    }
    if (this.#appId === undefined) {
      throw new Error('SVC_WHATSAPP_APP_ID is not set: media samples given by URL cannot be uploaded to Meta');
    }
    let sample = template.mediaSample;
    try {
      sample ??= await loadMediaSample(url, media.format, this.#allowPrivateSamples);
    } catch (error) {
      if (!(error instanceof DownloadError)) throw error;
      // The sample cannot be used any more: Meta cannot review the template without it.
      const message = `The ${media.format} sample at ${url} cannot be used: ${error.message}.`;
      return { ok: false, failure: { kind: 'http', status: 400, error: { code: 100, message, error_user_title: 'Media sample unavailable', error_user_msg: message }, retryAfterMs: undefined } };
    }
    const accessToken = whatsappCredentials(template.credentials!).accessToken;
    const session = await this.#client.call<{ id?: string }>({
      method: 'POST',
      path: `/${encodeURIComponent(this.#appId)}/uploads`,
      accessToken,
      query: { file_length: String(sample.bytes.length), file_type: sample.contentType },
    });
    if (!session.ok) return session;
    const uploadId = session.body?.id;
    if (typeof uploadId !== 'string' || !uploadId.startsWith('upload:')) throw new Error('the upload session answered without an upload id');
    // The id goes into the path as Meta gives it ("upload:…", with its own query string).
    const uploaded = await this.#client.call<{ h?: string }>({
      method: 'POST',
      path: `/${uploadId}`,
      accessToken,
      scheme: 'OAuth',
      headers: { file_offset: '0', 'content-type': 'application/octet-stream' },
      bytes: sample.bytes,
    });
    if (!uploaded.ok) return uploaded;
    if (typeof uploaded.body?.h !== 'string') throw new Error('the upload answered without a handle');
    return { ok: true, status: uploaded.status, body: uploaded.body.h };
  }

  async #createTemplate(businessAccountId: string, template: TemplateSubmission): Promise<GraphResult<GraphTemplate>> {
    const sample = await this.#uploadedSample(template);
    if (!sample.ok) {
      this.#logger.warn({ templateId: template.templateId, error: graphFailureError(sample.failure) }, 'template media sample upload failed');
      return sample;
    }
    const result = await this.#client.call<GraphTemplate>({
      method: 'POST',
      path: `/${encodeURIComponent(businessAccountId)}/message_templates`,
      accessToken: whatsappCredentials(template.credentials!).accessToken,
      body: createTemplatePayload(template, sample.body),
    });
    if (!result.ok) {
      this.#logger.warn({ templateId: template.templateId, error: graphFailureError(result.failure) }, 'template submission refused');
    }
    return result;
  }

  async #findTemplate(businessAccountId: string, template: TemplateSubmission): Promise<GraphTemplate | undefined> {
    const listed = required(
      await this.#client.call<{ data?: GraphTemplate[] }>({
        method: 'GET',
        path: `/${encodeURIComponent(businessAccountId)}/message_templates`,
        accessToken: whatsappCredentials(template.credentials!).accessToken,
        query: { name: template.name, fields: TEMPLATE_FIELDS, limit: '100' },
      }),
      'template lookup failed',
    );
    return listed?.data?.find((found) => found.name === template.name && found.language === template.language);
  }
}
