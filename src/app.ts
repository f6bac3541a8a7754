import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config, Role } from './config.ts';
import { type Database, openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { resolveEncryptionKey } from './encryptionKey.ts';
import type { HttpContext, TestHooks } from './http/context.ts';
import { KeyProjects } from './http/keyProjects.ts';
import { KeyUsageRecorder } from './http/keyUsage.ts';
import { RateLimiter } from './http/rateLimit.ts';
import { Sending } from './sending/sendMessages.ts';
import { createMetricsRegistry } from './http/metrics.ts';
import { buildOpsServer } from './http/opsServer.ts';
import { buildHttpServer } from './http/server.ts';
import { createLogger } from './logger.ts';
import { type IdleHeapTrim, startIdleHeapTrim } from './idleHeapTrim.ts';
import { undici } from './net/undici.ts';
import { createProvider, type ProviderRegistry } from './providers/registry.ts';
import type { Provider, ProviderInbound } from './providers/provider.ts';
import { createWorkers } from './workers/index.ts';
import { createMessageCounters } from './workers/messageCounters.ts';
import { registerMessageQueueMetrics } from './workers/messageQueueHealth.ts';
import { Notifier } from './workers/notifier.ts';
import { createProviderInbound } from './workers/providerReports.ts';
import { loadRateCard } from './costs/loadRateCard.ts';

export interface AppOptions {
  role?: Role;
  logger?: Logger;
  testHooks?: TestHooks;
  /** The providers SVC_PROVIDER chooses from; default: the built-in registry (tests add their own). */
  providers?: ProviderRegistry;
}

export interface App {
  readonly config: Config;
  readonly database: Database;
  readonly logger: Logger;
  readonly provider: Provider;
  /** The one entry point for provider reports (tests feed it out-of-order and duplicate reports). */
  readonly inbound: ProviderInbound;
  /** Wakes workers; tests that create work directly in the database use it as the service would. */
  readonly notifier: Notifier;
  /** The HTTP server, for roles api and all. */
  readonly http: FastifyInstance | undefined;
  /** The operator port's URL (metrics, health), once started; undefined when it is off. */
  readonly opsUrl: string | undefined;
  /** Starts listening and the workers; resolves with the base URL, or undefined for a worker. */
  start(): Promise<string | undefined>;
  /** Stops taking requests, finishes in-flight work and closes the database. */
  stop(): Promise<void>;
}

/** Builds every part of the service from its configuration; start() and stop() run them in order. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const role = options.role ?? 'all';
  const logger = options.logger ?? createLogger(config.logLevel, config.logFormat);
  const database = openDatabase(config.databaseUrl, { poolSize: config.databasePoolSize });
  try {
    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
    const encryptionKey = resolveEncryptionKey(config.encryptionKey, database.sqlitePath, logger);
    const metrics = createMetricsRegistry();
    const counters = createMessageCounters(metrics);
    let heapTrim: IdleHeapTrim | undefined;
    const notifier = new Notifier(database, logger);
    const provider = createProvider({ config, database, notifier, logger }, options.providers);
    const rateCard = loadRateCard(config.cost);
    if (rateCard.example) logger.info('costs are priced by the bundled EXAMPLE rate card (not Meta\'s prices): set SVC_RATE_CARD');
    const costs = { card: rateCard.card, currency: config.cost.currency };
    const inbound = createProviderInbound({ database, notifier, logger, autoSuppress: config.autoSuppress, errorClassOf: provider.errorClassOf, costs, counters });
    const keyUsage = new KeyUsageRecorder(database, logger);
    const ctx: HttpContext = {
      config,
      database,
      logger,
      metrics,
      encryptionKey,
      keyUsage,
      provider,
      inbound,
      notifier,
      counters,
      sending: new Sending(database, notifier, provider.parameterRule),
      keyLimiter: new RateLimiter(config.apiRateLimitPerMinute),
      keyProjects: new KeyProjects(),
      testHooks: options.testHooks ?? {},
    };
    registerMessageQueueMetrics(metrics, database.db);
    const http = role === 'worker' ? undefined : await buildHttpServer(ctx);
    const ops = config.opsPort === undefined ? undefined : await buildOpsServer(ctx);
    let opsUrl: string | undefined;
    const runsWorkers = role !== 'api';
    const workers = runsWorkers
      ? createWorkers({ config, database, logger, metrics, provider, notifier, encryptionKey, costs, counters })
      : [];

    return {
      config,
      database,
      logger,
      provider,
      inbound,
      notifier,
      http,
      get opsUrl() {
        return opsUrl;
      },
      async start() {
        keyUsage.start();
        heapTrim ??= startIdleHeapTrim({ logger });
        await notifier.listen();
        // The servers are readied (plugins, routes) before the workers start, so no send granted
        // in a pacing window waits behind that work on the event loop (it once held it for 1.2 s).
        await http?.ready();
        await ops?.ready();
        if (runsWorkers) {
          // Workers call out (webhooks, the Graph API): load the HTTP client now, not inside the
          // first call's deadline (≈ 0.1 s of loading that holds the event loop).
          undici();
          provider.start(inbound);
          for (const worker of workers) worker.start();
        }
        if (ops) opsUrl = await ops.listen({ host: config.opsHost, port: config.opsPort });
        if (!http) return undefined;
        return http.listen({ host: config.host, port: config.port });
      },
      async stop() {
        heapTrim?.stop();
        await ops?.close();
        if (http) {
          // Keep-alive connections go idle as their last response leaves: close them as they do,
          // and cut any still busy at the deadline so shutdown stays bounded.
          const sweeper = setInterval(() => http.server.closeIdleConnections(), 50);
          const deadline = setTimeout(() => http.server.closeAllConnections(), config.shutdownTimeoutMs);
          await http.close();
          clearInterval(sweeper);
          clearTimeout(deadline);
        }
        await Promise.all(workers.map((worker) => worker.stop()));
        await provider.stop();
        await notifier.close();
        await keyUsage.stop();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}
