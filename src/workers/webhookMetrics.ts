import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Database } from '../db/database.ts';
import { countDueWebhookDeliveries, webhookQueueStats } from '../db/webhookDeliveries.ts';
import { sampled } from './sampled.ts';

/** What the webhook worker shows of itself at scrape time. */
export interface WebhookWorkerState {
  readonly inFlight: number;
  readonly openCircuits: number;
  /** Projects whose deliveries wait for an open circuit (as of the last claim). */
  readonly heldProjects: readonly string[];
}

export function webhookMetrics(registry: Registry, worker: WebhookWorkerState, database: Database) {
  const registers = [registry];
  // A scrape never scans the deliveries: the queue's figures are sampled at most every 10 s (the
  // held count reads only the slices of projects behind an open circuit).
  const queue = sampled(() => webhookQueueStats(database.db, Date.now()));
  new Gauge({
    name: 'svc_webhook_queue_depth',
    help: 'Webhook deliveries pending (due now or waiting for a retry); sampled every 10 s.',
    registers,
    async collect() {
      const stats = await queue().catch(() => undefined);
      if (stats) this.set(stats.depth);
    },
  });
  new Gauge({
    name: 'svc_webhook_oldest_due_age_seconds',
    help: 'How long the oldest due webhook delivery has been waiting (0 when none is due); sampled every 10 s.',
    registers,
    async collect() {
      const stats = await queue().catch(() => undefined);
      if (stats) this.set(stats.oldestDueAt === undefined ? 0 : Math.max(0, Date.now() - stats.oldestDueAt) / 1000);
    },
  });
  new Gauge({
    name: 'svc_webhook_attempts_in_flight',
    help: 'Webhook attempts this process is making right now.',
    registers,
    collect() {
      this.set(worker.inFlight);
    },
  });
  new Gauge({
    name: 'svc_webhook_circuit_open',
    help: 'Receiver origins whose circuit is open or half-open in this process: their deliveries wait.',
    registers,
    collect() {
      this.set(worker.openCircuits);
    },
  });
  new Gauge({
    name: 'svc_webhook_deliveries_held',
    help: 'Due webhook deliveries not attempted because their receiver’s circuit is open.',
    registers,
    async collect() {
      const count = await countDueWebhookDeliveries(database.db, worker.heldProjects, Date.now()).catch(() => undefined);
      if (count !== undefined) this.set(count);
    },
  });
  return {
    deliveries: new Counter({
      name: 'svc_webhook_deliveries_total',
      help: 'Webhook deliveries finished, by outcome: succeeded or failed (after the last attempt, or refused).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    attempts: new Counter({
      name: 'svc_webhook_attempts_total',
      help: 'Webhook attempts, by outcome.',
      labelNames: ['outcome'] as const,
      registers,
    }),
    latency: new Histogram({
      name: 'svc_webhook_attempt_duration_seconds',
      help: 'Time from sending a webhook to its answer (or timeout), by outcome.',
      labelNames: ['outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    circuitTransitions: new Counter({
      name: 'svc_webhook_circuit_transitions_total',
      help: 'Receiver circuits opened (again, after a failed probe: reopened) and closed.',
      labelNames: ['to'] as const,
      registers,
    }),
  };
}
