import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { ErrorClassOf, Provider } from '../providers/provider.ts';
import type { DropBurstWatch } from './heldMessages.ts';
import type { CostPricing } from '../costs/charges.ts';
import type { MessageCounters } from './messageCounters.ts';
import type { Notifier } from './notifier.ts';

// What the workers and the provider's reports are given by the composition root (app.ts). In a
// file of their own, so the modules that take them never import the modules that build them.

export interface WorkerDeps {
  config: Config;
  database: Database;
  logger: Logger;
  metrics: Registry;
  provider: Provider;
  notifier: Notifier;
  encryptionKey: Buffer;
  /** Prices delivered messages by the rate card (costs/charges.ts); absent: costs are not recorded. */
  costs?: CostPricing;
  /** The app's message counters (messageCounters.ts); absent: not counted. */
  counters?: MessageCounters;
}

export interface ReportDeps {
  database: Database;
  notifier: Notifier;
  logger: Logger;
  /** SVC_AUTO_SUPPRESS (sending/autoSuppress.ts); off when not given, as documented. */
  autoSuppress?: boolean;
  /** The provider's error classification (providers/provider.ts); absent: no code suppresses anyone. */
  errorClassOf?: ErrorClassOf;
  /** Watches drops of held messages for bursts (tests give one with their own clock); default: one per inbound. */
  dropBurstWatch?: DropBurstWatch;
  /** Prices delivered messages by the rate card; absent: costs are not recorded. */
  costs?: CostPricing;
  /** The app's message counters (messageCounters.ts); absent: not counted. */
  counters?: MessageCounters;
}
