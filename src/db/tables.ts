// Row types of every table. Times are epoch milliseconds; JSON columns are text.

export interface ProjectsTable {
  id: string;
  name: string;
  owner_email: string;
  provider_phone_number_id: string | null;
  /** AES-256-GCM ciphertext of the provider access token (see domain/secretBox.ts). */
  provider_access_token_enc: string | null;
  callback_url: string | null;
  webhook_secret_enc: string;
  previous_webhook_secret_enc: string | null;
  previous_webhook_secret_expires_at: number | null;
  credentials_updated_at: number | null;
  /** The sending number's throughput as the provider reports it; null: SVC_PROVIDER_MAX_MPS. */
  provider_messages_per_second: number | null;
  created_at: number;
  updated_at: number;
  /** When the operator disabled the project (svc projects disable); null while enabled. */
  disabled_at: number | null;
  // Kept by db/suppressions.ts (0 when the project is created, by the column default).
  /** How many numbers the project suppresses. */
  suppression_count?: number;
  /** Moved by every change of the project's suppression list: what a send was checked against. */
  suppression_version?: number;
  // Opt-out settings (db/optOutSettings.ts); column defaults when the project is created.
  /** JSON array of the project's opt-out keywords; null: the defaults. */
  opt_out_keywords?: string | null;
  /** 1: an inbound keyword suppresses its sender; 0: keywords are ignored. */
  opt_out_enabled?: number;
  // Kept by db/retention.ts (null when the project is created): the project's own, shorter retention.
  /** How long the project's messages are kept; null: SVC_RETENTION_MESSAGES. */
  message_retention_ms?: number | null;
  /** How long the project's webhook deliveries are kept; null: SVC_RETENTION_WEBHOOK_DELIVERIES. */
  webhook_delivery_retention_ms?: number | null;
  /** How MARKETING templates are sent (db/marketingMessages.ts): null off, 'fallback' or 'strict'. */
  marketing_messages?: string | null;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export type TemplateStatus = 'PENDING' | 'APPROVED' | 'REJECTED';
/** CANCELED only ever follows QUEUED, by a cancel (POST /v1/messages/{id}/cancel). */
export type MessageStatus = 'QUEUED' | 'SENT' | 'DELIVERED' | 'READ' | 'FAILED' | 'CANCELED';

export interface TemplatesTable {
  id: string;
  project_id: string;
  name: string;
  language: string;
  category: string;
  status: TemplateStatus;
  /** JSON: the components exactly as submitted. */
  components: string;
  rejection_reason: string | null;
  provider_template_id: string | null;
  /** When the review worker should next ask the provider about a PENDING template. */
  review_due_at: number | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
  /** The provider's own status (Meta's APPROVED, PAUSED, DISABLED, FLAGGED…); null: as `status`. */
  provider_status: string | null;
  /** Why the provider put it in that status (a pause, a rejection's details). */
  provider_status_reason: string | null;
  /** When the provider reported that status: an older report changes nothing. */
  provider_status_at: number | null;
  /** JSON [{ from, to, at }]: category changes the provider made, oldest first. */
  category_history: string | null;
  /** JSON { category, effectiveAt }: a category change the provider announced ahead. */
  upcoming_category: string | null;
  /** NAMED for named parameters; null: POSITIONAL. */
  parameter_format?: string | null;
}

export interface TemplateStatusEventsTable {
  id: string;
  template_id: string;
  project_id: string;
  from_status: TemplateStatus | null;
  to_status: TemplateStatus;
  reason: string | null;
  occurred_at: number;
}

export interface MessagesTable {
  id: string;
  project_id: string;
  recipient: string;
  template_id: string;
  template_name: string;
  language: string;
  category: string;
  /** JSON object of BODY variables ("1" → value). */
  variables: string;
  /** JSON object of HEADER variables, or null. */
  header_variables: string | null;
  /** JSON { header?, body, footer? }: the text the recipient reads. */
  rendered: string;
  status: MessageStatus;
  /** Submissions to the provider so far. */
  attempts: number;
  /** When the dispatcher should next submit a QUEUED message; null once it is not queued. */
  due_at: number | null;
  lease_expires_at: number | null;
  provider_message_id: string | null;
  /** JSON { code, title, message } when FAILED. */
  error: string | null;
  queued_at: number;
  sent_at: number | null;
  delivered_at: number | null;
  read_at: number | null;
  failed_at: number | null;
  updated_at: number;
  /** The sendAt the message was accepted with (due_at started there); null: send at once. */
  scheduled_for: number | null;
  canceled_at: number | null;
  /** The batch (batches.id) it was accepted in; null for a single send. */
  batch_id: string | null;
  /** JSON RichSendParameters (providers/provider.ts): what a rich template sends beside its variables; null otherwise. */
  rich_parameters: string | null;
  /** JSON { billable, pricingModel, category, type }: Meta's `pricing` of the message; null until reported. */
  pricing?: string | null;
  /** When the provider held the message for quality assessment; null when it never did. */
  held_at?: number | null;
  /** The provider API that took it: cloud_api or marketing_messages; null until taken. */
  send_route?: string | null;
  /** The recipient's BSUID when the provider named it for a message sent to a phone number. */
  recipient_user_id?: string | null;
  /** The recipient's phone (E.164) when the provider named it for a message sent to a BSUID. */
  recipient_phone?: string | null;
  /** JSON { amount, currency }: what its delivery cost by the rate card; null when free, undelivered or unpriced. */
  cost?: string | null;
}

/**
 * Two identities of one WhatsApp user in a project (a phone and a BSUID, an old BSUID and its new
 * one): one row per ordered pair (db/recipientLinks.ts).
 */
export interface RecipientLinksTable {
  project_id: string;
  identity: string;
  linked: string;
  /** status | inbound | user_changed_user_id */
  source: string;
  created_at: number;
  seen_at: number;
}

export interface BatchesTable {
  id: string;
  project_id: string;
  template_name: string;
  language: string;
  /** Messages accepted in the batch. */
  total: number;
  created_at: number;
}

export interface SuppressionsTable {
  project_id: string;
  /** E.164. */
  phone_number: string;
  /** Time-sortable (sup_…), for paging; never shown. */
  id: string;
  reason: string | null;
  /** api | provider | opt_out_keyword | marketing_opt_out */
  source: string;
  /** all | marketing (MARKETING templates only). Absent on rows inserted without it: the column default, all. */
  scope?: string;
  created_at: number;
}

/** What a recipient answered to a message (CONTRACT §9); lives as long as its message. */
export interface MessageRepliesTable {
  /** evt_… (an event id, sorting with the status events by time): also the event id of its message.replied deliveries. */
  id: string;
  project_id: string;
  message_id: string;
  /** The provider's id of the inbound message (Meta's wamid): a retried notification records nothing twice. */
  provider_reply_id: string;
  /** button | text */
  type: string;
  text: string;
  /** A button's payload; null for a text reply. */
  payload: string | null;
  occurred_at: number;
  created_at: number;
}

export interface MessageEventsTable {
  id: string;
  message_id: string;
  project_id: string;
  status: MessageStatus;
  occurred_at: number;
  /** JSON { code, title, message } for FAILED. */
  error: string | null;
  created_at: number;
}

export interface IdempotencyKeysTable {
  project_id: string;
  key: string;
  request_hash: string;
  message_id: string;
  response_status: number;
  response_body: string;
  created_at: number;
  expires_at: number;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  /** A UUID: X-Service-Delivery and webhook-id, the same on every attempt. */
  id: string;
  project_id: string;
  event_id: string;
  /** Null for events not about a message (template events, test events). */
  message_id: string | null;
  event: string;
  /** The callback URL when the delivery was made; re-read until the first attempt. */
  url: string;
  /** The webhook endpoint it goes to; null: the project's callbackUrl. */
  endpoint_id: string | null;
  /** The template of a template event. */
  template_id: string | null;
  /**
   * The JSON body of an event that cannot be rebuilt (template, reply and test events; every
   * delivery made before migration 0023). '' for a message status event: its body is rebuilt from
   * the event and its message (db/webhookPayloads.ts), the same bytes on every attempt.
   */
  payload: string;
  status: WebhookDeliveryStatus;
  attempt_count: number;
  due_at: number | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
  /**
   * The latest attempt (number attempt_count, sent to `url`), kept in the row so that a delivery
   * answered at once needs no webhook_attempts row; null before the first attempt, and on rows
   * whose attempts were all recorded in webhook_attempts (before migration 0023).
   */
  last_attempt_at?: number | null;
  last_status_code?: number | null;
  last_duration_ms?: number | null;
  last_error?: string | null;
  last_response_body?: string | null;
}

export interface WebhookEndpointsTable {
  id: string;
  project_id: string;
  url: string;
  /** JSON array of event types; null: every event. */
  events: string | null;
  /** 1 or 0. */
  enabled: number;
  description: string | null;
  created_at: number;
  updated_at: number;
}

/** Messages that reached a status in an hour (epoch ms of its start, UTC), per template and language. */
export interface MessageCountsTable {
  project_id: string;
  hour: number;
  status: string;
  template: string;
  language: string;
  count: number;
}

/** Delivered messages' cost per UTC day (epoch ms of its start), template, category, country, market and currency. */
export interface MessageCostsTable {
  project_id: string;
  day: number;
  template: string;
  category: string;
  country: string;
  market: string;
  currency: string;
  charged: number;
  amount_micros: number;
  free: number;
  unpriced: number;
}

/** A volume tier a WABA reached for a market and pricing category in a month (Meta's account_update). */
export interface VolumeTiersTable {
  business_account_id: string;
  /** `YYYY-MM` (UTC) the tier applies in: Meta's `effective_month`. */
  month: string;
  /** The rate card's market (Meta's `region`). */
  market: string;
  /** The rate card's category (`utility`, `authentication`, …). */
  category: string;
  /** Meta's `LOWER:UPPER` (upper inclusive or MAX). */
  tier: string;
  tier_lower: number;
  /** From when messages are priced at it (epoch ms). */
  effective_from: number;
  received_at: number;
}

/** Meta's pricing_analytics totals of a UTC day beside svc's, with the differences (JSON). */
export interface CostReconciliationsTable {
  project_id: string;
  day: number;
  checked_at: number;
  currency: string;
  meta_messages: number;
  meta_amount_micros: number;
  svc_messages: number;
  svc_amount_micros: number;
  differences: string;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  at: number;
  url: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  /** The first 1 KiB of the receiver's answer. */
  response_body: string | null;
}

export interface SandboxSubmissionsTable {
  id: string;
  message_id: string;
  provider_message_id: string | null;
  recipient: string;
  /** accepted | transient | permanent */
  outcome: string;
  submitted_at: number;
}

export interface SandboxReportsTable {
  id: string;
  message_id: string;
  provider_message_id: string;
  status: MessageStatus;
  error: string | null;
  due_at: number;
  lease_expires_at: number | null;
}

/** What the provider says of a project's sending number and business account (one row per project with credentials). */
export interface ProviderAccountsTable {
  project_id: string;
  /** projects.credentials_updated_at of the credentials this row describes. */
  credentials_updated_at: number;
  business_account_id: string | null;
  display_phone_number: string | null;
  verified_name: string | null;
  quality_rating: string | null;
  /** 1 when the provider sends this account's status reports to svc, else 0. */
  webhooks_subscribed: number;
  /** JSON { code, message }: what the customer must do; null when nothing. */
  problem: string | null;
  /** When the provider was last asked; null: not yet (credentials saved before these checks). */
  checked_at: number | null;
  /** When to ask again. */
  check_due_at: number;
  /** The WABA's currency (ISO 4217) as the provider reports it; null: not known (SVC_RATE_CARD_CURRENCY applies). */
  currency?: string | null;
}

export interface JobLeasesTable {
  name: string;
  /** The worker process running the job; null between runs. */
  holder: string | null;
  lease_expires_at: number;
  next_run_at: number;
}

export interface SendRateWindowsTable {
  phone_number_id: string;
  window_start: number;
  count: number;
  /** The window's budget: count never passes it. */
  budget: number;
  /** What the last reservation of this window was granted. */
  granted: number;
}

export interface WorkerHeartbeatsTable {
  worker_id: string;
  /** The last time the worker looked for due messages to claim. */
  claimed_at: number;
}

/** The purge's bookkeeping: one row, 'purge' (see migration 0018_retention). */
export interface RetentionStateTable {
  name: string;
  /** The worker running the purge; null between runs. */
  holder: string | null;
  lease_expires_at: number;
  next_run_at: number;
  /** Every hourly counter before this hour has been rolled up into daily rows. */
  counts_rolled_up_through: number;
}

export interface Tables {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  templates: TemplatesTable;
  template_status_events: TemplateStatusEventsTable;
  messages: MessagesTable;
  message_events: MessageEventsTable;
  message_replies: MessageRepliesTable;
  batches: BatchesTable;
  suppressions: SuppressionsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_endpoints: WebhookEndpointsTable;
  message_counts: MessageCountsTable;
  message_costs: MessageCostsTable;
  cost_reconciliations: CostReconciliationsTable;
  volume_tiers: VolumeTiersTable;
  sandbox_submissions: SandboxSubmissionsTable;
  sandbox_reports: SandboxReportsTable;
  send_rate_windows: SendRateWindowsTable;
  worker_heartbeats: WorkerHeartbeatsTable;
  provider_accounts: ProviderAccountsTable;
  retention_state: RetentionStateTable;
  job_leases: JobLeasesTable;
  recipient_links: RecipientLinksTable;
}
