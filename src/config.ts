import { parseDuration, parseSchedule } from './domain/durations.ts';
import { PROVIDER_NAMES, type ProviderName } from './providers/names.ts';
import { DEFAULT_GRAPH_VERSION, GRAPH_VERSION_PATTERN } from './providers/whatsapp/graphVersions.ts';

export type Role = 'api' | 'worker' | 'all';

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  readonly logLevel: string;
  readonly bodyLimitBytes: number;
  readonly trustProxy: boolean;
  readonly signup: 'open' | 'closed';
  readonly adminToken: string | undefined;
  readonly signupRateLimitPerMinute: number;
  /** Requests per API key per minute, per API process (token bucket). */
  readonly apiRateLimitPerMinute: number;
  /** Active API keys a project may hold at once. */
  readonly maxApiKeysPerProject: number;
  /**
   * The base of every absolute link the API gives out (e.g. `Link` headers), without a trailing
   * slash; undefined means http://HOST:<the port actually listened on>.
   */
  readonly publicUrl: string | undefined;
  /** Base64 of 32 bytes; undefined means "generate one beside the SQLite file". */
  readonly encryptionKey: string | undefined;
  /** A name in the provider registry (providers/registry.ts). */
  readonly provider: ProviderName;
  readonly sandbox: {
    readonly reviewDelayMs: number;
    readonly deliveryDelayMs: number;
    readonly readDelayMs: number;
  };
  readonly sendRetryScheduleMs: readonly number[];
  readonly providerMaxMps: number;
  /** SVC_PROVIDER_MAX_MPS was set: a cap on every number, not only the pace of one whose throughput is unknown. */
  readonly providerMaxMpsIsCap: boolean;
  /** Submissions to the provider in flight at once per worker process. */
  readonly dispatchConcurrency: number;
  readonly webhookTimeoutMs: number;
  readonly webhookRetryScheduleMs: readonly number[];
  readonly allowPrivateCallbacks: boolean;
  readonly whatsapp: {
    readonly graphUrl: string;
    readonly apiVersion: string;
    readonly appSecret: string | undefined;
    readonly verifyToken: string | undefined;
    /** The Meta app's id: media samples of templates are uploaded through it (Resumable Upload API). */
    readonly appId: string | undefined;
  };
  readonly shutdownTimeoutMs: number;
  readonly http: {
    /** Time a client has to send a whole request (headers and body). */
    readonly requestTimeoutMs: number;
    /** Time a client has to send the request's headers. */
    readonly headersTimeoutMs: number;
    /** How long an idle keep-alive connection is kept open. */
    readonly keepAliveTimeoutMs: number;
    /** Connections open at once; more are refused. */
    readonly maxConnections: number;
  };
  /** The operator port (metrics, health): every role listens on it. Undefined: none. */
  readonly opsPort: number | undefined;
  readonly opsHost: string;
  /** How log lines are written: JSON, or for people (the default when stdout is a terminal). */
  readonly logFormat: 'json' | 'pretty';
  /** /readyz fails when due messages have waited this long with no worker claiming any. */
  readonly workerStallMs: number;
  /** Put the numbers of messages FAILED as opted out / not on WhatsApp on the suppression list. */
  readonly autoSuppress: boolean;
  /** Largest body of POST /v1/messages/batch (up to 1,000 items). */
  readonly batchBodyLimitBytes: number;
  /** How long each kind of data is kept (see README, "Data retention"). */
  readonly retention: RetentionConfig;
  /** What messages cost (README, "Cost"). */
  readonly cost: CostConfig;
}

export interface CostConfig {
  /** The operator's rate card (CSV); undefined: the bundled example card. */
  readonly rateCardPath: string | undefined;
  /** The currency of the WhatsApp Business Accounts (Meta bills a WABA in the one currency it was created with). */
  readonly currency: string;
  /** How often each WABA's totals are compared with Meta's pricing_analytics; 0: never. */
  readonly reconcileIntervalMs: number;
}

/** Retention periods in milliseconds, and how the purge runs. */
export interface RetentionConfig {
  /** Messages with their status events, deliveries and attempts, batches, template status events. The most a project may set. */
  readonly messagesMs: number;
  /** Webhook deliveries (payloads) and their attempts. The most a project may set. */
  readonly webhookDeliveriesMs: number;
  /** The sandbox provider's records of submissions. */
  readonly sandboxMs: number;
  /** Analytics counters (message_counts). */
  readonly analyticsMs: number;
  /** Hourly analytics counters older than this are rolled up into one row per day. */
  readonly analyticsHourlyMs: number;
  /** How often a purge run starts. */
  readonly intervalMs: number;
  /** Rows of a kind deleted per transaction (a step). */
  readonly batchSize: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function flag(env: Env, name: string, fallback = false): boolean {
  const raw = oneOf(env, name, ['true', 'false', '1', '0'], fallback ? 'true' : 'false');
  return raw === 'true' || raw === '1';
}

function schedule(env: Env, name: string, fallback: string): number[] {
  try {
    return parseSchedule(read(env, name) ?? fallback);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
}

function duration(env: Env, name: string, fallback: string, min: number): number {
  let value: number;
  try {
    value = parseDuration(read(env, name) ?? fallback);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
  if (value < min) throw new ConfigError(`${name} must be at least ${min} ms, got "${read(env, name)}"`);
  return value;
}

// Defaults a careful operator would choose: the delivery log a month; messages a year and a month
// (a yearly report still finds last year's month); the counters two years, daily after 35 days.
function retention(env: Env): RetentionConfig {
  const config: RetentionConfig = {
    messagesMs: duration(env, 'SVC_RETENTION_MESSAGES', '400d', 1000),
    webhookDeliveriesMs: duration(env, 'SVC_RETENTION_WEBHOOK_DELIVERIES', '30d', 1000),
    sandboxMs: duration(env, 'SVC_RETENTION_SANDBOX', '7d', 1000),
    analyticsMs: duration(env, 'SVC_RETENTION_ANALYTICS', '730d', 1000),
    analyticsHourlyMs: duration(env, 'SVC_RETENTION_ANALYTICS_HOURLY', '35d', 1000),
    intervalMs: duration(env, 'SVC_RETENTION_INTERVAL', '1h', 1000),
    batchSize: integer(env, 'SVC_RETENTION_BATCH_SIZE', 100, 1, 10_000),
  };
  if (config.analyticsMs < config.messagesMs) {
    throw new ConfigError('SVC_RETENTION_ANALYTICS must not be shorter than SVC_RETENTION_MESSAGES (the counts outlive the messages)');
  }
  return config;
}

function databaseUrl(env: Env): string {
  const url = read(env, 'SVC_DATABASE_URL') ?? 'sqlite:./data/svc.db';
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(url)) {
    throw new ConfigError(
      `SVC_DATABASE_URL must be sqlite:PATH or postgres://…, got "${url.split('@').pop()}"`,
    );
  }
  return url;
}

function encryptionKey(env: Env): string | undefined {
  const raw = read(env, 'SVC_ENCRYPTION_KEY');
  if (raw !== undefined && Buffer.from(raw, 'base64').length !== 32) {
    throw new ConfigError('SVC_ENCRYPTION_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
  }
  return raw;
}

function publicUrl(env: Env): string | undefined {
  const raw = read(env, 'SVC_PUBLIC_URL');
  if (raw === undefined) return undefined;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (
    url === undefined ||
    !/^https?:\/\/[^/?#]/i.test(raw) ||
    url.username !== '' ||
    url.password !== '' ||
    raw.includes('?') ||
    raw.includes('#')
  ) {
    throw new ConfigError(
      `SVC_PUBLIC_URL must be an absolute http(s) URL without user, query or fragment (e.g. https://api.example.com), got "${raw}"`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

function graphVersion(env: Env): string {
  const raw = read(env, 'SVC_WHATSAPP_API_VERSION') ?? DEFAULT_GRAPH_VERSION;
  if (!GRAPH_VERSION_PATTERN.test(raw)) throw new ConfigError(`SVC_WHATSAPP_API_VERSION must look like v24.0, got "${raw}"`);
  return raw;
}

function graphUrl(env: Env): string {
  const raw = read(env, 'SVC_WHATSAPP_GRAPH_URL') ?? 'https://graph.facebook.com';
  if (!URL.canParse(raw)) throw new ConfigError(`SVC_WHATSAPP_GRAPH_URL must be a URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

function httpLimits(env: Env): Config['http'] {
  const requestTimeoutMs = integer(env, 'SVC_HTTP_REQUEST_TIMEOUT_MS', 30_000, 1000, 3_600_000);
  const headersTimeoutMs = integer(env, 'SVC_HTTP_HEADERS_TIMEOUT_MS', 10_000, 1000, 3_600_000);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError('SVC_HTTP_HEADERS_TIMEOUT_MS must not be longer than SVC_HTTP_REQUEST_TIMEOUT_MS');
  }
  return {
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'SVC_HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 3_600_000),
    maxConnections: integer(env, 'SVC_HTTP_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
  };
}

/**
 * The operator port's default sits next to the API port, one per role, so that an `api` and a
 * `worker` process started with the same environment on one host do not collide: PORT+1 for
 * `api` and `all`, PORT+2 for `worker`. With PORT=0 (tests, several processes) a free one too.
 */
export function defaultOpsPort(port: number, role: Role): number {
  if (port === 0) return 0;
  return Math.min(65535, port + (role === 'worker' ? 2 : 1));
}

function opsPort(env: Env, role: Role): number | undefined {
  if (read(env, 'SVC_OPS_PORT') === 'off') return undefined;
  const port = integer(env, 'PORT', 8080, 0, 65535);
  return integer(env, 'SVC_OPS_PORT', defaultOpsPort(port, role), 0, 65535);
}

function logFormat(env: Env): 'json' | 'pretty' {
  const format = oneOf(env, 'SVC_LOG_FORMAT', ['auto', 'json', 'pretty'], 'auto');
  if (format !== 'auto') return format;
  return process.stdout.isTTY ? 'pretty' : 'json';
}

/** Settings that are only wrong together: refused before anything is opened, written or migrated. */
function checkCombinations(env: Env): void {
  if (/^postgres(ql)?:/.test(read(env, 'SVC_DATABASE_URL') ?? '') && read(env, 'SVC_ENCRYPTION_KEY') === undefined) {
    throw new ConfigError('SVC_ENCRYPTION_KEY is required with PostgreSQL (32 bytes, base64: openssl rand -base64 32)');
  }
  if (read(env, 'SVC_PROVIDER') === 'whatsapp') {
    for (const [name, what] of [
      ['SVC_WHATSAPP_APP_SECRET', 'the Meta app secret that signs webhooks'],
      ['SVC_WHATSAPP_VERIFY_TOKEN', 'the token Meta sends to verify the webhook URL'],
    ] as const) {
      if (read(env, name) === undefined) throw new ConfigError(`SVC_PROVIDER=whatsapp needs ${name} (${what})`);
    }
  }
}

/** Reads every setting from the environment once; an invalid value names its variable. */
/** The settings from the environment; `role` only picks the operator port's default. */
export function loadConfig(env: Env = process.env, role: Role = 'all'): Config {
  checkCombinations(env);
  const signup = oneOf(env, 'SVC_SIGNUP', ['open', 'closed'], 'open');
  const adminToken = read(env, 'SVC_ADMIN_TOKEN');
  if (signup === 'closed' && adminToken === undefined) {
    throw new ConfigError('SVC_SIGNUP=closed needs SVC_ADMIN_TOKEN (a non-empty token)');
  }
  const config: Config = {
    host: read(env, 'HOST') ?? '127.0.0.1',
    port: integer(env, 'PORT', 8080, 0, 65535),
    databaseUrl: databaseUrl(env),
    databasePoolSize: integer(env, 'SVC_DATABASE_POOL_SIZE', 10, 1, 1000),
    logLevel: oneOf(
      env,
      'SVC_LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      'info',
    ),
    bodyLimitBytes: integer(env, 'SVC_BODY_LIMIT_BYTES', 65536, 1024, 10 * 1024 * 1024),
    trustProxy: flag(env, 'SVC_TRUST_PROXY'),
    signup,
    adminToken,
    signupRateLimitPerMinute: integer(env, 'SVC_SIGNUP_RATE_LIMIT', 1000, 1, 1_000_000),
    apiRateLimitPerMinute: integer(env, 'SVC_API_RATE_LIMIT', 6000, 1, 10_000_000),
    maxApiKeysPerProject: integer(env, 'SVC_MAX_API_KEYS_PER_PROJECT', 100, 1, 100_000),
    publicUrl: publicUrl(env),
    encryptionKey: encryptionKey(env),
    provider: oneOf(env, 'SVC_PROVIDER', PROVIDER_NAMES, 'sandbox'),
    sandbox: {
      reviewDelayMs: integer(env, 'SVC_SANDBOX_REVIEW_DELAY_MS', 2000, 0, 86_400_000),
      deliveryDelayMs: integer(env, 'SVC_SANDBOX_DELIVERY_DELAY_MS', 500, 0, 86_400_000),
      readDelayMs: integer(env, 'SVC_SANDBOX_READ_DELAY_MS', 1000, 0, 86_400_000),
    },
    sendRetryScheduleMs: schedule(env, 'SVC_SEND_RETRY_SCHEDULE', '1s,5s,30s,2m,10m,30m,1h,3h,6h,12h'),
    providerMaxMps: integer(env, 'SVC_PROVIDER_MAX_MPS', 80, 1, 100_000),
    providerMaxMpsIsCap: read(env, 'SVC_PROVIDER_MAX_MPS') !== undefined,
    dispatchConcurrency: integer(env, 'SVC_DISPATCH_CONCURRENCY', 2000, 1, 100_000),
    webhookTimeoutMs: integer(env, 'SVC_WEBHOOK_TIMEOUT_MS', 10_000, 100, 300_000),
    webhookRetryScheduleMs: schedule(env, 'SVC_WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h'),
    allowPrivateCallbacks: flag(env, 'SVC_ALLOW_PRIVATE_CALLBACKS'),
    whatsapp: {
      graphUrl: graphUrl(env),
      apiVersion: graphVersion(env),
      appSecret: read(env, 'SVC_WHATSAPP_APP_SECRET'),
      verifyToken: read(env, 'SVC_WHATSAPP_VERIFY_TOKEN'),
      appId: read(env, 'SVC_WHATSAPP_APP_ID'),
    },
    shutdownTimeoutMs: integer(env, 'SVC_SHUTDOWN_TIMEOUT_MS', 8000, 100, 60_000),
    http: httpLimits(env),
    opsPort: opsPort(env, role),
    opsHost: read(env, 'SVC_OPS_HOST') ?? read(env, 'HOST') ?? '127.0.0.1',
    logFormat: logFormat(env),
    workerStallMs: integer(env, 'SVC_WORKER_STALL_MS', 60_000, 1000, 86_400_000),
    autoSuppress: flag(env, 'SVC_AUTO_SUPPRESS', false),
    batchBodyLimitBytes: integer(env, 'SVC_BATCH_BODY_LIMIT_BYTES', 4 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    retention: retention(env),
    cost: cost(env),
  };
  return deepFreeze(config);
}

function cost(env: Env): CostConfig {
  const currency = (read(env, 'SVC_RATE_CARD_CURRENCY') ?? 'USD').toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) throw new ConfigError(`SVC_RATE_CARD_CURRENCY must be an ISO 4217 code such as USD, got "${currency}"`);
  const reconcile = read(env, 'SVC_COST_RECONCILE_INTERVAL');
  return {
    rateCardPath: read(env, 'SVC_RATE_CARD'),
    currency,
    reconcileIntervalMs: reconcile === 'off' ? 0 : duration(env, 'SVC_COST_RECONCILE_INTERVAL', '6h', 60_000),
  };
}

function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) {
    if (inner !== null && typeof inner === 'object') deepFreeze(inner);
  }
  return Object.freeze(value);
}
