// One realistic example for every request body and every JSON answer of the API, by operationId
// and status: the document's media-type `example`s (what /docs shows instead of schema-made
// placeholders). They tell one story — Acme Shop's order_update template in en_US sent to
// +5511987654321 — so ids and names agree from one operation to the next. test/openapi/examples
// validates each one against its schema with the server's own validator, and sends the request
// bodies to a live svc, so an example cannot drift from what the API takes and gives.

import {
  MESSAGE_EVENTS,
  REPLY_EVENT,
  replyWebhookPayload,
  TEMPLATE_EVENTS,
  type TemplateEvent,
  templateWebhookPayload,
  testWebhookPayload,
  webhookPayload,
  type WebhookStatus,
} from '../../domain/webhookPayload.ts';

export interface OperationExamples {
  /** Query parameters the call needs (the SDK sample sends them). */
  query?: Record<string, string>;
  /** The request body. */
  request?: unknown;
  /** The answer's body, by status. */
  responses?: Record<string, unknown>;
}

export const PROJECT_ID = 'proj_01jd2k3m4n5p6q7r8s9t0v1w2x';
export const API_KEY_ID = 'key_01jd2k3m4n5p6q7r8s9t0v1w2x';
export const TEMPLATE_ID = 'tpl_01jd2k3m4n5p6q7r8s9t0v1w2x';
export const MESSAGE_ID = 'msg_01jd2k3m4n5p6q7r8s9t0v1w2x';
export const BATCH_ID = 'bat_01jd2k3m4n5p6q7r8s9t0v1w2x';
export const ENDPOINT_ID = 'we_01jd2k3m4n5p6q7r8s9t0v1w2x';
export const EVENT_ID = 'evt_01jd2k3m4n5p6q7r8s9t0v1w2x';
export const DELIVERY_ID = '0193a8f2-6c1e-7d4b-9a2f-5e8c1b3d7f90';
export const RECIPIENT = '+5511987654321';
const PROVIDER_MESSAGE_ID = 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjQ2QTdGMzFCQzU0RDg3RkM2AA==';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const PREVIOUS_SECRET = 'whsec_c2VjcmV0LW9mLXRoZS1wcmV2aW91cy1vbmU=';
const CALLBACK_URL = 'https://hooks.acme.example/svc';

const T0 = '2026-11-22T10:00:00.000Z';
const T1 = '2026-11-22T10:00:01.250Z';
const T2 = '2026-11-22T10:00:03.900Z';
const T3 = '2026-11-22T10:04:12.000Z';

// --- Projects --------------------------------------------------------------------------------

export const CREATE_PROJECT = { name: 'Acme Shop', ownerEmail: 'ops@acme.example' };

const provider = {
  status: 'ready',
  businessAccountId: '102290129340398',
  displayPhoneNumber: '+55 11 4003-1234',
  verifiedName: 'Acme Shop',
  qualityRating: 'GREEN',
  messagesPerSecond: 80,
  webhooksSubscribed: true,
  checkedAt: T0,
};

const project = {
  projectId: PROJECT_ID,
  id: PROJECT_ID,
  name: 'Acme Shop',
  ownerEmail: 'ops@acme.example',
  providerPhoneNumberId: '106540352242922',
  callbackUrl: CALLBACK_URL,
  provider,
  createdAt: T0,
  updatedAt: T1,
};

export const SAVE_PROVIDER_CREDENTIALS = {
  providerPhoneNumberId: '106540352242922',
  providerAccessToken: 'EAAGm0PX4ZCpsBAKZCQm7hZBz5yQ3WZDZD',
  providerBusinessAccountId: '102290129340398',
  callbackUrl: CALLBACK_URL,
};

const retention = {
  messages: { retention: '90d', projectSetting: '90d', maximum: '400d' },
  webhookDeliveries: { retention: '30d', projectSetting: null, maximum: '30d' },
};

export const SET_RETENTION = { messages: '90d', webhookDeliveries: null };

// --- API keys --------------------------------------------------------------------------------

const apiKey = { id: API_KEY_ID, name: 'ci', prefix: 'svc_live_Xq3v', createdAt: T0, lastUsedAt: T3 };
const NEW_KEY = 'svc_live_Xq3v9Zt0bq2mWcRdK7pLs4HnYe8uJf2a';

export const CREATE_API_KEY = { name: 'ci' };

// --- Templates -------------------------------------------------------------------------------

export const CREATE_TEMPLATE = {
  name: 'order_update',
  language: 'en_US',
  category: 'UTILITY',
  components: [
    { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['#1001'] } },
    { type: 'BODY', text: 'Hello {{1}}, your order {{2}} has shipped today.', example: { body_text: [['Ana', '#1001']] } },
    { type: 'FOOTER', text: 'Acme Shop' },
  ],
};

const template = {
  id: TEMPLATE_ID,
  name: CREATE_TEMPLATE.name,
  language: CREATE_TEMPLATE.language,
  category: 'UTILITY',
  status: 'APPROVED',
  providerStatus: 'APPROVED',
  parameterFormat: 'POSITIONAL',
  components: CREATE_TEMPLATE.components,
  categoryHistory: [],
  createdAt: T0,
  updatedAt: T2,
};
const pendingTemplate = { ...template, status: 'PENDING', providerStatus: 'PENDING', updatedAt: T0 };

export const REVIEW_TEMPLATE = { status: 'APPROVED' };

export const PREVIEW_TEMPLATE = { variables: { '1': 'Ana', '2': '#1001' }, headerVariables: { '1': '#1001' } };

// --- Messages --------------------------------------------------------------------------------

export const SEND_MESSAGE = {
  to: RECIPIENT,
  template: 'order_update',
  language: 'en_US',
  variables: { '1': 'Ana', '2': '#1001' },
  headerVariables: { '1': '#1001' },
};

const content = { header: 'Order #1001', body: 'Hello Ana, your order #1001 has shipped today.', footer: 'Acme Shop' };

const queued = {
  id: MESSAGE_ID,
  status: 'QUEUED',
  to: RECIPIENT,
  template: 'order_update',
  language: 'en_US',
  queuedAt: T0,
  updatedAt: T0,
  sentAt: null,
  deliveredAt: null,
  readAt: null,
  failedAt: null,
  scheduledFor: null,
  canceledAt: null,
  batchId: null,
  providerMessageId: null,
  variables: SEND_MESSAGE.variables,
  headerVariables: SEND_MESSAGE.headerVariables,
  content,
};
const delivered = {
  ...queued,
  status: 'DELIVERED',
  updatedAt: T2,
  sentAt: T1,
  deliveredAt: T2,
  providerMessageId: PROVIDER_MESSAGE_ID,
  pricing: { billable: true, pricingModel: 'PMP', category: 'utility', type: 'regular' },
};
const scheduled = { ...queued, id: 'msg_01jd2k9x4n5p6q7r8s9t0v1w2y', scheduledFor: '2026-11-23T09:00:00.000Z' };
const canceled = { ...scheduled, status: 'CANCELED', canceledAt: T1, updatedAt: T1 };

export const ADVANCE_MESSAGE = { status: 'DELIVERED' };
export const REPLY_TO_MESSAGE = { text: 'Thanks! When will it arrive?' };

export const SEND_BATCH = {
  template: 'order_update',
  language: 'en_US',
  items: [
    { to: RECIPIENT, variables: { '1': 'Ana', '2': '#1001' }, headerVariables: { '1': '#1001' } },
    { to: '+5521998765432', variables: { '1': 'Bruno', '2': '#1002' }, headerVariables: { '1': '#1002' } },
    { to: '+55 11 1234', variables: { '1': 'Carla', '2': '#1003' }, headerVariables: { '1': '#1003' } },
  ],
};

const E164_RULE =
  'must be E.164: a + then the country code and number, 8 to 15 digits (e.g. +5511987654321), or a WhatsApp ' +
  'business-scoped user id (e.g. US.13491208655302741918).';
const problem = (status: number, code: string, title: string, detail: string, errors?: unknown[]) => ({
  type: 'about:blank',
  title,
  status,
  code,
  detail,
  requestId: 'req_Xq3v9Zt0bq2mWcRd',
  ...(errors !== undefined && { errors }),
});

const webhookDelivery = {
  id: DELIVERY_ID,
  eventId: EVENT_ID,
  event: 'message.delivered',
  messageId: MESSAGE_ID,
  templateId: null,
  endpointId: null,
  url: CALLBACK_URL,
  status: 'succeeded',
  attempts: [{ attempt: 1, at: T2, url: CALLBACK_URL, statusCode: 200, durationMs: 84, responseBody: 'ok' }],
  createdAt: T2,
  updatedAt: T2,
};

// --- Suppressions, opt-out -------------------------------------------------------------------

export const CREATE_SUPPRESSION = { phoneNumber: '+5521998765432', reason: 'Asked by phone not to be contacted' };
const suppression = { ...CREATE_SUPPRESSION, source: 'api', scope: 'all', createdAt: T0 };
const optOut = { keywords: ['STOP', 'PARAR', 'SAIR'], enabled: true };
export const UPDATE_OPT_OUT = { keywords: ['STOP', 'PARAR', 'SAIR'] };

// --- Webhooks --------------------------------------------------------------------------------

export const CREATE_WEBHOOK_ENDPOINT = {
  url: 'https://hooks.acme.example/svc/failures',
  events: ['message.failed', 'template.rejected'],
  description: 'Ops pager',
};
const endpoint = {
  id: ENDPOINT_ID,
  url: CREATE_WEBHOOK_ENDPOINT.url,
  events: CREATE_WEBHOOK_ENDPOINT.events,
  allEvents: false,
  enabled: true,
  description: 'Ops pager',
  createdAt: T0,
  updatedAt: T0,
};
export const UPDATE_WEBHOOK_ENDPOINT = { events: null };
const allEvents = [
  'message.sent', 'message.delivered', 'message.read', 'message.failed', 'message.canceled', 'message.replied',
  'template.approved', 'template.rejected',
];

export const RECOVER_WEBHOOK_DELIVERIES = { since: '2026-11-22T00:00:00.000Z' };

const messageDeliveredPayload = {
  event: 'message.delivered',
  message_id: MESSAGE_ID,
  to: RECIPIENT,
  template: 'order_update',
  status: 'DELIVERED',
  provider_message_id: PROVIDER_MESSAGE_ID,
  occurred_at: T2,
};

// --- Every operation -------------------------------------------------------------------------

export const OPERATION_EXAMPLES: Record<string, OperationExamples> = {
  checkLiveness: { responses: { '200': { status: 'ok' } } },
  checkReadiness: { responses: { '200': { status: 'ready' } } },

  createProject: {
    request: CREATE_PROJECT,
    responses: {
      '200': {
        projectId: PROJECT_ID,
        id: PROJECT_ID,
        name: CREATE_PROJECT.name,
        ownerEmail: CREATE_PROJECT.ownerEmail,
        createdAt: T0,
        apiKey: NEW_KEY,
        apiKeyId: API_KEY_ID,
      },
    },
  },
  getProject: { responses: { '200': { ...project, providerName: 'whatsapp' } } },
  eraseProject: {
    responses: {
      '200': {
        projectId: PROJECT_ID,
        id: PROJECT_ID,
        erasedAt: T3,
        erased: {
          apiKeys: 2,
          providerCredentials: 1,
          templates: 3,
          messages: 1250,
          messageEvents: 4870,
          idempotencyKeys: 40,
          webhookDeliveries: 3620,
          webhookAttempts: 3705,
        },
      },
    },
  },
  saveProviderCredentials: {
    request: SAVE_PROVIDER_CREDENTIALS,
    responses: {
      '200': {
        projectId: PROJECT_ID,
        id: PROJECT_ID,
        providerPhoneNumberId: SAVE_PROVIDER_CREDENTIALS.providerPhoneNumberId,
        callbackUrl: CALLBACK_URL,
        provider,
        updatedAt: T1,
      },
    },
  },
  getWebhookSecret: { responses: { '200': { secret: SECRET, secrets: [SECRET] } } },
  rotateWebhookSecret: {
    responses: { '200': { secret: SECRET, secrets: [SECRET, PREVIOUS_SECRET], previousSecretExpiresAt: '2026-11-23T10:00:00.000Z' } },
  },
  getProjectRetention: { responses: { '200': retention } },
  setProjectRetention: { request: SET_RETENTION, responses: { '200': retention } },

  createApiKey: { request: CREATE_API_KEY, responses: { '200': { ...apiKey, lastUsedAt: null, key: NEW_KEY, apiKey: NEW_KEY } } },
  listApiKeys: { responses: { '200': [apiKey] } },
  revokeApiKey: { responses: { '200': { ...apiKey, revokedAt: T3 } } },

  createTemplate: { request: CREATE_TEMPLATE, responses: { '200': pendingTemplate } },
  listTemplates: { responses: { '200': [template] } },
  getTemplate: { responses: { '200': template } },
  deleteTemplate: { responses: { '200': { ...template, deletedAt: T3, providerDeletion: 'deleted' } } },
  previewTemplate: { request: PREVIEW_TEMPLATE, responses: { '200': content } },
  reviewTemplateInSandbox: { request: REVIEW_TEMPLATE, responses: { '200': template } },

  sendMessage: { request: SEND_MESSAGE, responses: { '202': queued } },
  listMessages: { responses: { '200': [delivered] } },
  getMessage: { responses: { '200': delivered } },
  cancelMessage: { responses: { '200': canceled } },
  listMessageEvents: {
    responses: {
      '200': [
        { id: 'evt_01jd2k3m4n5p6q7r8s9t0v1w2a', status: 'QUEUED', event: null, occurredAt: T0, deliveries: [] },
        { id: 'evt_01jd2k3m4n5p6q7r8s9t0v1w2b', status: 'SENT', event: 'message.sent', occurredAt: T1, deliveries: [] },
        { id: EVENT_ID, status: 'DELIVERED', event: 'message.delivered', occurredAt: T2, deliveries: [webhookDelivery] },
      ],
    },
  },
  advanceMessageInSandbox: { request: ADVANCE_MESSAGE, responses: { '200': delivered } },
  replyToMessageInSandbox: {
    request: REPLY_TO_MESSAGE,
    responses: {
      '200': {
        id: 'evt_01jd2k3m4n5p6q7r8s9t0v1w2r',
        messageId: MESSAGE_ID,
        event: 'message.replied',
        reply: { type: 'text', text: REPLY_TO_MESSAGE.text },
        occurredAt: T3,
        optedOut: false,
      },
    },
  },
  sendMessageBatch: {
    request: SEND_BATCH,
    responses: {
      '202': {
        batchId: BATCH_ID,
        acceptedCount: 2,
        rejectedCount: 1,
        items: [
          { index: 0, status: 202, message: { ...queued, batchId: BATCH_ID } },
          {
            index: 1,
            status: 202,
            message: {
              ...queued,
              id: 'msg_01jd2k3m4n5p6q7r8s9t0v1w2z',
              to: '+5521998765432',
              batchId: BATCH_ID,
              variables: SEND_BATCH.items[1]!.variables,
              headerVariables: SEND_BATCH.items[1]!.headerVariables,
              content: { ...content, header: 'Order #1002', body: 'Hello Bruno, your order #1002 has shipped today.' },
            },
          },
          {
            index: 2,
            status: 400,
            error: problem(400, 'validation_failed', 'Bad Request', `/items/2/to ${E164_RULE}`, [
              { field: '/items/2/to', code: 'invalid_phone', message: `/items/2/to ${E164_RULE}` },
            ]),
          },
        ],
      },
    },
  },
  listBatches: {
    responses: {
      '200': [{ id: BATCH_ID, template: 'order_update', language: 'en_US', createdAt: T0, total: 2, counts: { QUEUED: 0, SENT: 0, DELIVERED: 1, READ: 1, FAILED: 0, CANCELED: 0 } }],
    },
  },
  getBatch: {
    responses: {
      '200': { id: BATCH_ID, template: 'order_update', language: 'en_US', createdAt: T0, total: 2, counts: { QUEUED: 0, SENT: 0, DELIVERED: 1, READ: 1, FAILED: 0, CANCELED: 0 } },
    },
  },

  createSuppression: { request: CREATE_SUPPRESSION, responses: { '200': suppression, '201': suppression } },
  listSuppressions: { responses: { '200': [suppression] } },
  getSuppression: { responses: { '200': suppression } },
  getOptOutSettings: { responses: { '200': optOut } },
  getMarketingMessagesSetting: { responses: { '200': { mode: 'fallback' } } },
  updateMarketingMessagesSetting: { request: { mode: 'fallback' }, responses: { '200': { mode: 'fallback' } } },
  updateOptOutSettings: { request: UPDATE_OPT_OUT, responses: { '200': optOut } },

  listWebhookDeliveries: { responses: { '200': [webhookDelivery] } },
  getWebhookDelivery: { responses: { '200': { ...webhookDelivery, payload: JSON.stringify(messageDeliveredPayload) } } },
  retryWebhookDelivery: { responses: { '202': { ...webhookDelivery, status: 'pending', nextAttemptAt: T3, updatedAt: T3 } } },
  recoverWebhookDeliveries: { request: RECOVER_WEBHOOK_DELIVERIES, responses: { '202': { requeued: 12 } } },
  createWebhookEndpoint: { request: CREATE_WEBHOOK_ENDPOINT, responses: { '201': endpoint } },
  listWebhookEndpoints: { responses: { '200': [endpoint] } },
  getWebhookEndpoint: { responses: { '200': endpoint } },
  updateWebhookEndpoint: {
    request: UPDATE_WEBHOOK_ENDPOINT,
    responses: { '200': { ...endpoint, events: allEvents, allEvents: true, updatedAt: T3 } },
  },
  testWebhookEndpoint: { responses: { '202': { deliveryId: DELIVERY_ID } } },

  getCostAnalytics: {
    query: { from: '2026-11-01T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z', groupBy: 'market,category' },
    responses: {
      '200': {
        from: '2026-11-01T00:00:00.000Z',
        to: '2026-12-01T00:00:00.000Z',
        groupBy: ['market', 'category'],
        totals: [{ currency: 'USD', amount: 61.4375, charged: 1912, free: 344, unpriced: 0 }],
        groups: [
          { market: 'Brazil', category: 'marketing', currency: 'USD', amount: 37.5, charged: 600, free: 0, unpriced: 0 },
          { market: 'Brazil', category: 'utility', currency: 'USD', amount: 9.6, charged: 1200, free: 344, unpriced: 0 },
          { market: 'Mexico', category: 'authentication', currency: 'USD', amount: 14.3375, charged: 112, free: 0, unpriced: 0 },
        ],
      },
    },
  },
  getCostReconciliation: {
    query: { from: '2026-11-20T00:00:00.000Z', to: '2026-11-22T00:00:00.000Z' },
    responses: {
      '200': [
        {
          day: '2026-11-20T00:00:00.000Z',
          checkedAt: '2026-11-22T06:00:00.000Z',
          currency: 'USD',
          meta: { messages: 412, amount: 9.8125 },
          svc: { messages: 412, amount: 9.8125 },
          matches: true,
          differences: [],
        },
        {
          day: '2026-11-21T00:00:00.000Z',
          checkedAt: '2026-11-22T06:00:00.000Z',
          currency: 'USD',
          meta: { messages: 388, amount: 9.3 },
          svc: { messages: 387, amount: 9.2375 },
          matches: false,
          differences: [{ category: 'marketing', country: 'BR', metaMessages: 101, svcMessages: 100, metaAmount: 6.3125, svcAmount: 6.25 }],
        },
      ],
    },
  },
  getMessageAnalytics: {
    query: { from: '2026-11-21T00:00:00.000Z', to: '2026-11-23T00:00:00.000Z', interval: 'day', groupBy: 'status' },
    responses: {
      '200': {
        from: '2026-11-21T00:00:00.000Z',
        to: '2026-11-23T00:00:00.000Z',
        interval: 'day',
        groupBy: 'status',
        buckets: [
          { start: '2026-11-21T00:00:00.000Z', counts: { DELIVERED: 120, READ: 860, FAILED: 4 } },
          { start: '2026-11-22T00:00:00.000Z', counts: { QUEUED: 3, SENT: 12, DELIVERED: 240, READ: 730, FAILED: 9 } },
        ],
      },
    },
  },
  listEvents: {
    responses: { '200': [{ id: EVENT_ID, type: 'message.delivered', occurredAt: T2, payload: messageDeliveredPayload }] },
  },
};

// --- Webhook payloads --------------------------------------------------------------------------

// What a template event carries after each provider status (the template's own status and reason).
const TEMPLATE_AFTER: Partial<Record<TemplateEvent, { status: 'PENDING' | 'APPROVED' | 'REJECTED'; providerStatus: string; reason: string | null }>> = {
  'template.approved': { status: 'APPROVED', providerStatus: 'APPROVED', reason: null },
  'template.rejected': { status: 'REJECTED', providerStatus: 'REJECTED', reason: 'INVALID_FORMAT: The body has a placeholder at its start.' },
  'template.paused': { status: 'APPROVED', providerStatus: 'PAUSED', reason: 'Low quality: recipients blocked or reported it.' },
  'template.disabled': { status: 'APPROVED', providerStatus: 'DISABLED', reason: 'Paused too often for low quality.' },
};

/**
 * The body svc POSTs for `event`, made by the same functions that build the real deliveries
 * (src/domain/webhookPayload.ts), so the reference shows exactly what a receiver gets.
 */
export function webhookPayloadExample(event: string): unknown {
  const occurredAt = Date.parse(T2);
  if (event === REPLY_EVENT) {
    return JSON.parse(
      replyWebhookPayload({
        eventId: 'evt_01jd2k3m4n5p6q7r8s9t0v1w2r',
        messageId: MESSAGE_ID,
        to: RECIPIENT,
        template: 'order_update',
        reply: { type: 'button', text: 'Track my order', payload: 'track-1001' },
        occurredAt,
      }),
    );
  }
  if ((MESSAGE_EVENTS as readonly string[]).includes(event)) {
    const status = event.slice('message.'.length).toUpperCase() as WebhookStatus;
    return JSON.parse(
      webhookPayload({
        status,
        messageId: MESSAGE_ID,
        to: RECIPIENT,
        template: 'order_update',
        providerMessageId: PROVIDER_MESSAGE_ID,
        occurredAt,
        error: status === 'FAILED' ? { code: '131026', title: 'Message undeliverable', message: 'Message undeliverable.' } : null,
      }),
    );
  }
  if ((TEMPLATE_EVENTS as readonly string[]).includes(event)) {
    const providerStatus = event.slice('template.'.length).toUpperCase();
    const after = TEMPLATE_AFTER[event as TemplateEvent] ?? { status: 'APPROVED', providerStatus, reason: null };
    return JSON.parse(
      templateWebhookPayload({
        event: event as TemplateEvent,
        eventId: 'tse_01jd2k3m4n5p6q7r8s9t0v1w2x',
        templateId: TEMPLATE_ID,
        name: 'order_update',
        language: 'en_US',
        ...after,
        occurredAt,
      }),
    );
  }
  return JSON.parse(testWebhookPayload({ eventId: EVENT_ID, endpointId: ENDPOINT_ID, occurredAt }));
}

// --- Error answers ---------------------------------------------------------------------------

const SUPPRESSED =
  '+5521998765432 is on this project’s suppression list (opted out); remove it with DELETE /v1/suppressions/{phoneNumber} to send to it.';

/** What svc answers with each error code (RFC 9457 problem details), in its own words. */
const PROBLEM_DETAILS: Record<string, { detail: string; errors?: { field: string; code: string; message: string }[] }> = {
  validation_failed: {
    detail: `/to ${E164_RULE}`,
    errors: [{ field: '/to', code: 'invalid_phone', message: `/to ${E164_RULE}` }],
  },
  invalid_json: { detail: 'The body is not valid JSON.' },
  bad_request: { detail: 'The request has no Host header; HTTP/1.1 requires one.' },
  unauthorized: { detail: 'The API key is unknown or revoked.' },
  not_found: { detail: 'No message of this project has that id.' },
  template_exists: { detail: "A template named 'order_update' in en_US is already registered; use another name or language, or delete it first." },
  template_not_pending: { detail: 'The template is already APPROVED; it cannot be reviewed again as REJECTED.' },
  last_active_key: { detail: 'This is the project’s only active key; create another first.' },
  api_key_limit_reached: { detail: 'The project already has 100 active API keys, the most it may hold; revoke one first.' },
  idempotency_request_in_progress: { detail: 'Retry this request shortly.' },
  webhook_endpoint_limit_reached: { detail: 'The project already has 20 webhook endpoints, the most it may hold; delete one first.' },
  webhook_endpoint_disabled: { detail: 'The webhook endpoint is disabled; enable it to send it a test event.' },
  invalid_status_transition: { detail: 'The message was canceled before it was sent; nobody can reply to it.' },
  message_not_cancelable: { detail: 'The message is SENT: it was submitted already and cannot be canceled.' },
  payload_too_large: { detail: 'The request body is too large.' },
  unsupported_media_type: { detail: 'Send the request body as application/json.' },
  template_not_found: { detail: "No template named 'order_updates' is registered in this project." },
  template_not_approved: { detail: "Template 'order_update' (en_US) is PENDING: it can be sent once the provider approves it." },
  template_language_mismatch: { detail: "Template 'order_update' exists in en_US, not in 'pt_BR'; send with one of those languages." },
  template_variables_mismatch: { detail: "Template 'order_update' (en_US) needs variables 1, 2 and headerVariables 1." },
  provider_not_configured: { detail: 'Save the provider credentials first: PUT /v1/projects/me/provider-credentials.' },
  provider_credentials_rejected: { detail: 'The provider refused the access token (Meta error 190: invalid OAuth access token). Nothing was saved.' },
  provider_setup_incomplete: { detail: 'Templates cannot reach the provider yet: the WhatsApp Business Account id is unknown.' },
  idempotency_key_reused: { detail: 'This Idempotency-Key was used with a different request body in the last 24 hours; use a new key.' },
  webhook_event_unknown: {
    detail: 'Unknown event type: message.exploded.',
    errors: [{ field: '/events/0', code: 'unknown_event', message: "'message.exploded' is not an event type." }],
  },
  invalid_time_range: { detail: 'since must be at most 7 days ago.' },
  recipient_suppressed: {
    detail: SUPPRESSED,
    errors: [{ field: '/to', code: 'suppressed', message: SUPPRESSED }],
  },
  send_at_out_of_range: {
    detail: '/sendAt is more than 35 days ahead; give a time from now to 35 days ahead.',
    errors: [{ field: '/sendAt', code: 'out_of_range', message: '/sendAt is more than 35 days ahead; give a time from now to 35 days ahead.' }],
  },
  rate_limited: { detail: 'Too many requests with this API key; retry in 3 s.' },
  internal_error: { detail: 'Something went wrong on our side; quote the requestId.' },
  unavailable: { detail: 'The database is not reachable right now; retry shortly.' },
};

/** The problem details svc answers with for `code` at `status`, or undefined for an unknown code. */
export function problemExample(code: string, status: number, title: string): unknown {
  const known = PROBLEM_DETAILS[code];
  return known === undefined ? undefined : problem(status, code, title, known.detail, known.errors);
}
