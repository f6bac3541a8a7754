import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Provider } from '../providers/provider.ts';
import type { Registry } from 'prom-client';
import type { WorkerLoop } from './loop.ts';
import type { Notifier } from './notifier.ts';

export interface WorkerDeps {
  config: Config;
  database: Database;
  logger: Logger;
  metrics: Registry;
  provider: Provider;
  notifier: Notifier;
  encryptionKey: Buffer;
}

/** The background loops of a worker process, each woken by its channel. */
export function createWorkers(_deps: WorkerDeps): WorkerLoop[] {
  const loops: WorkerLoop[] = [];
  return loops;
}
