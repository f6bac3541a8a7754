import type { Logger } from 'pino';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { TestHooks } from '../../src/http/context.ts';
import type { ProviderName } from '../../src/providers/names.ts';
import type { ProviderRegistry } from '../../src/providers/registry.ts';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from './databases.ts';
import { call, type CallOptions, type Reply } from './http.ts';

export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

export interface TestServer {
  readonly url: string;
  readonly app: App;
  readonly database: TestDatabase;
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** Creates a project; returns its id, its first key and the whole reply body. */
  createProject(name?: string): Promise<{ projectId: string; key: string; keyId: string; body: any }>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  testHooks?: TestHooks;
  /** Reuse this database instead of a fresh one (restarts). */
  database?: TestDatabase;
  /** Log here instead of the silent default (e.g. to read every log line a test caused). */
  logger?: Logger;
  /** Run this provider, from this registry (a test's own provider), instead of SVC_PROVIDER's. */
  provider?: { name: string; registry: ProviderRegistry };
}

/** The real service on a random loopback port, over a fresh database of the given kind. */
export async function startTestServer(
  kind: DatabaseKind,
  options: TestServerOptions = {},
): Promise<TestServer> {
  const database = options.database ?? (await createTestDatabase(kind, { migrated: true }));
  const config = loadConfig({
    SVC_LOG_LEVEL: 'silent',
    SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    SVC_ALLOW_PRIVATE_CALLBACKS: 'true',
    SVC_SIGNUP_RATE_LIMIT: '100000',
    ...options.env,
    HOST: '127.0.0.1',
    PORT: '0',
    SVC_DATABASE_URL: database.url,
  });
  const app = await createApp(
    options.provider ? { ...config, provider: options.provider.name as ProviderName } : config,
    { testHooks: options.testHooks, logger: options.logger, ...(options.provider && { providers: options.provider.registry }) },
  );
  const url = (await app.start())!;
  const server: TestServer = {
    url,
    app,
    database,
    call: (method, path, callOptions) => call(url, method, path, callOptions),
    async createProject(name = 'Acme') {
      const reply = await call(url, 'POST', '/v1/projects', {
        body: { name, ownerEmail: 'owner@example.com' },
      });
      if (reply.status !== 200) throw new Error(`project creation failed: ${reply.status} ${reply.text}`);
      return {
        projectId: reply.body.projectId,
        key: reply.body.apiKey,
        keyId: reply.body.apiKeyId,
        body: reply.body,
      };
    },
    async close() {
      await app.stop();
      if (!options.database) await database.drop();
    },
  };
  return server;
}
