import type { Logger } from 'pino';
import { type Config, ConfigError } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Notifier } from '../workers/notifier.ts';
import type { Provider } from './provider.ts';
import { SandboxProvider } from './sandbox/index.ts';

export function createProvider(config: Config, database: Database, notifier: Notifier, logger: Logger): Provider {
  switch (config.provider) {
    case 'sandbox':
      return new SandboxProvider(config.sandbox, database, notifier, logger);
    case 'whatsapp':
      throw new ConfigError('SVC_PROVIDER=whatsapp is not available in this version; use sandbox');
  }
}
