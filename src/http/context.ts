import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Provider, ProviderInbound } from '../providers/provider.ts';
import type { Notifier } from '../workers/notifier.ts';
import type { MessageCounters } from '../workers/messageCounters.ts';
import type { Sending } from '../sending/sendMessages.ts';
import type { KeyProjects } from './keyProjects.ts';
import type { KeyUsageRecorder } from './keyUsage.ts';
import type { RateLimiter } from './rateLimit.ts';

/** Seams for tests that must stop a request at an exact point; never set in production. */
export interface TestHooks {
  /** Runs after authentication, just before an authenticated write opens its transaction. */
  beforeAuthorizedWrite?: (route: string) => Promise<void>;
}

/** What the HTTP layer needs from the rest of the service. */
export interface HttpContext {
  readonly config: Config;
  readonly database: Database;
  readonly logger: Logger;
  readonly metrics: Registry;
  readonly encryptionKey: Buffer;
  readonly keyUsage: KeyUsageRecorder;
  readonly provider: Provider;
  /** The one entry point for provider reports; the sandbox test helpers use it too. */
  readonly inbound: ProviderInbound;
  readonly notifier: Notifier;
  /** The app's message counters (status changes recorded by a cancel count too). */
  readonly counters: MessageCounters;
  /** The one send use case, shared by the single and the batch send (one group commit). */
  readonly sending: Sending;
  /** One token bucket per API key. */
  readonly keyLimiter: RateLimiter;
  /** Which project each key hash belongs to, as this process last read it. */
  readonly keyProjects: KeyProjects;
  readonly testHooks: TestHooks;
}
