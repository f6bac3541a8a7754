import type { Logger } from 'pino';
import { type Config, ConfigError } from '../config.ts';
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
      // Without them Meta's webhooks could be neither verified nor trusted: refuse to start.
      if (config.whatsapp.appSecret === undefined) {
        throw new ConfigError('SVC_PROVIDER=whatsapp needs SVC_WHATSAPP_APP_SECRET (the Meta app secret that signs webhooks)');
      }
      if (config.whatsapp.verifyToken === undefined) {
        throw new ConfigError('SVC_PROVIDER=whatsapp needs SVC_WHATSAPP_VERIFY_TOKEN (the webhook verify token set at Meta)');
      }
      return new WhatsAppProvider(config.whatsapp, database, logger);
  }
}
