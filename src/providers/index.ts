import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Notifier } from '../workers/notifier.ts';
import type { Provider } from './provider.ts';
import { SandboxProvider } from './sandbox/index.ts';
import { WhatsAppProvider } from './whatsapp/index.ts';

export function createProvider(config: Config, database: Database, notifier: Notifier, logger: Logger): Provider {
  switch (config.provider) {
    case 'sandbox':
      return new SandboxProvider(config.sandbox, database, notifier, logger);
    case 'whatsapp':
      // loadConfig has made sure of the app secret and verify token: Meta's webhooks can be trusted.
      return new WhatsAppProvider(config.whatsapp, database, logger, { allowPrivateSamples: config.allowPrivateCallbacks });
  }
}
