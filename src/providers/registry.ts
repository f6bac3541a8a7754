import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Notifier } from '../workers/notifier.ts';
import type { ProviderName } from './names.ts';
import type { Provider } from './provider.ts';
import { SandboxProvider } from './sandbox/index.ts';
import { WhatsAppProvider } from './whatsapp/index.ts';

// The provider registry: one entry per provider, SVC_PROVIDER names which one a process runs.
// An entry builds its provider from the configuration; the provider it builds brings the rest
// (provider.ts): its client, its inbound routes, and how it reads credentials. Adding a provider
// is a folder under providers/, an entry here and its name in names.ts.

/** What svc hands a provider it builds. */
export interface ProviderDeps {
  config: Config;
  database: Database;
  notifier: Notifier;
  logger: Logger;
}

export interface ProviderEntry {
  create(deps: ProviderDeps): Provider;
}

export type ProviderRegistry = Readonly<Record<string, ProviderEntry>>;

export const PROVIDERS = {
  sandbox: {
    create: ({ config, database, notifier, logger }) => new SandboxProvider(config.sandbox, database, notifier, logger),
  },
  whatsapp: {
    // loadConfig has made sure of the app secret and verify token: Meta's webhooks can be trusted.
    create: ({ config, logger }) =>
      new WhatsAppProvider(config.whatsapp, logger, { allowPrivateSamples: config.allowPrivateCallbacks }),
  },
} as const satisfies Record<ProviderName, ProviderEntry>;

/** The provider `config.provider` names, built from `registry` (tests add their own entries). */
export function createProvider(deps: ProviderDeps, registry: ProviderRegistry = PROVIDERS): Provider {
  const entry = registry[deps.config.provider];
  if (entry === undefined) throw new Error(`no provider named ${deps.config.provider} in the registry`);
  return entry.create(deps);
}
