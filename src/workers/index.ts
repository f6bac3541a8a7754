import type { WorkerDeps } from './deps.ts';
import { WorkerLoop } from './loop.ts';
import { Dispatcher } from './dispatcher.ts';
import { createCostReconciliationJob } from './costReconciliation.ts';
import { createMaintenanceJob } from './maintenance.ts';
import { createProviderAccountJob } from './providerAccounts.ts';
import { createRetentionJob } from './retention.ts';
import { createSendRateGate } from './sendRate.ts';
import { createTemplateReviewJob } from './templateReview.ts';
import { WebhookDeliveryJob, WebhookDeliveryLoop } from './webhookDelivery.ts';


/** A background worker of the process: started with the service, stopped before the database closes. */
export interface Worker {
  start(): void;
  stop(): Promise<void>;
}

/** The background workers of a worker process, each woken by its channel. */
export function createWorkers(deps: WorkerDeps): Worker[] {
  const { logger, notifier } = deps;
  const dispatch = new Dispatcher(deps, createSendRateGate(deps.database), {
    maxInFlight: deps.config.dispatchConcurrency,
  });
  notifier.on('messages', (projectIds) => dispatch.wake(projectIds));
  const maintenance = new WorkerLoop(createMaintenanceJob(deps), logger, { pollMs: 60_000 });
  const templateReview = new WorkerLoop(createTemplateReviewJob(deps), logger);
  notifier.on('templates', () => templateReview.wake());
  const webhookJob = new WebhookDeliveryJob(deps);
  const webhooks = new WebhookDeliveryLoop(webhookJob, logger);
  notifier.on('webhooks', (projectIds) => {
    webhookJob.announce(projectIds);
    webhooks.wake();
  });
  const providerAccounts = new WorkerLoop(createProviderAccountJob(deps), logger, { pollMs: 60_000 });
  // Meta's throughput webhook makes an account due: its number is read again within seconds.
  notifier.on('accounts', () => providerAccounts.wake());
  // Data past its retention, beside the maintenance job (same processes, its own loop and pace).
  const retention = new WorkerLoop(createRetentionJob(deps), logger, { pollMs: 60_000 });
  // What Meta says each WABA was charged, beside svc's counts (WhatsApp only).
  const costJob = createCostReconciliationJob(deps);
  const costReconciliation = costJob ? [new WorkerLoop(costJob, logger, { pollMs: 3_600_000 })] : [];
  return [dispatch, maintenance, templateReview, webhooks, providerAccounts, retention, ...costReconciliation];
}
