import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Provider, ProviderInbound } from '../providers/provider.ts';
import type { Notifier } from '../workers/notifier.ts';
import type { KeyUsageRecorder } from './keyUsage.ts';

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
  readonly testHooks: TestHooks;
}
