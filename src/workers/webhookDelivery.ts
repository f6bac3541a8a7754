import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import {
  claimDueWebhookDeliveries,
  type DeliveryProject,
  findDeliveryProjects,
  nextWebhookDueAt,
  recordWebhookAttempt,
  releaseWebhookDelivery,
  type WebhookDeliveryRow,
  webhookQueueStats,
} from '../db/webhookDeliveries.ts';
import type { WebhookDeliveryStatus } from '../db/tables.ts';
import { newId } from '../domain/ids.ts';
import { nextRetryDelay, parseRetryAfter } from '../domain/webhookRetry.ts';
import { liveWebhookSecrets } from '../projectSecrets.ts';
import { type AttemptResult, WebhookSender } from '../webhooks/deliver.ts';
import type { Job } from './loop.ts';
import { WorkerLoop } from './loop.ts';

// The webhook worker: claims due deliveries, sends each as soon as it is claimed, records the
// attempt, and reschedules or finishes the delivery.
//
// A slow or dead receiver must not hold up anyone else's webhooks, so attempts never wait for
// each other: every claimed delivery is sent at once, concurrently, and the worker claims again
// whenever capacity frees up. Capacity is bounded overall and per receiver origin
// (scheme://host:port). A delivery whose origin is at its limit is given back at once, and its
// project is left out of claims until the origin has room again, so other projects' deliveries
// keep flowing past it.

export interface WebhookDeliveryLimits {
  /** Attempts in flight in this process. */
  maxInFlight: number;
  /** Attempts in flight in this process to one receiver origin. */
  maxPerOrigin: number;
}

export const DEFAULT_WEBHOOK_LIMITS: WebhookDeliveryLimits = { maxInFlight: 64, maxPerOrigin: 8 };

export interface WebhookDeliveryDeps {
  config: Config;
  database: Database;
  logger: Logger;
  metrics: Registry;
  encryptionKey: Buffer;
  limits?: WebhookDeliveryLimits;
}

/** Long enough for the attempt (bounded by the timeout) and recording it, with room to spare. */
export function webhookLeaseMs(timeoutMs: number): number {
  return timeoutMs * 2 + 2000;
}

const CANCELLED = 'not sent: the project has no callbackUrl any more';

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid';
  }
}

function webhookMetrics(registry: Registry, job: WebhookDeliveryJob, database: Database) {
  const registers = [registry];
  new Gauge({
    name: 'svc_webhook_queue_depth',
    help: 'Webhook deliveries pending (due now or waiting for a retry).',
    registers,
    async collect() {
      const stats = await webhookQueueStats(database.db, Date.now()).catch(() => undefined);
      if (stats) this.set(stats.depth);
    },
  });
  new Gauge({
    name: 'svc_webhook_oldest_due_age_seconds',
    help: 'How long the oldest due webhook delivery has been waiting (0 when none is due).',
    registers,
    async collect() {
      const now = Date.now();
      const stats = await webhookQueueStats(database.db, now).catch(() => undefined);
      if (stats) this.set(stats.oldestDueAt === undefined ? 0 : Math.max(0, now - stats.oldestDueAt) / 1000);
    },
  });
  new Gauge({
    name: 'svc_webhook_attempts_in_flight',
    help: 'Webhook attempts this process is making right now.',
    registers,
    collect() {
      this.set(job.inFlight);
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
  };
}

export class WebhookDeliveryJob implements Job {
  readonly name = 'webhook-delivery';
  readonly #deps: WebhookDeliveryDeps;
  readonly #limits: WebhookDeliveryLimits;
  readonly #leaseMs: number;
  readonly #sender: WebhookSender;
  readonly #stop = new AbortController();
  readonly #tasks = new Set<Promise<void>>();
  readonly #perOrigin = new Map<string, number>();
  /** Origin → projects whose deliveries were given back because the origin was full. */
  readonly #waiting = new Map<string, Set<string>>();
  readonly #metrics: ReturnType<typeof webhookMetrics>;
  #attempts = 0;
  #onCapacity: () => void = () => {};

  constructor(deps: WebhookDeliveryDeps) {
    this.#deps = deps;
    this.#limits = deps.limits ?? DEFAULT_WEBHOOK_LIMITS;
    this.#leaseMs = webhookLeaseMs(deps.config.webhookTimeoutMs);
    this.#sender = new WebhookSender({
      timeoutMs: deps.config.webhookTimeoutMs,
      allowPrivate: deps.config.allowPrivateCallbacks,
      connectionsPerOrigin: this.#limits.maxPerOrigin,
    });
    this.#metrics = webhookMetrics(deps.metrics, this, deps.database);
  }

  /** Attempts in flight now. */
  get inFlight(): number {
    return this.#attempts;
  }

  /** Called whenever an attempt finishes: capacity, or an ordered event, may have freed up. */
  onCapacity(callback: () => void): void {
    this.#onCapacity = callback;
  }

  async runOnce(now: number): Promise<{ handled: number; nextDueAt?: number }> {
    const free = this.#limits.maxInFlight - this.#attempts;
    if (free <= 0 || this.#stop.signal.aborted) return { handled: 0 };
    const { db, dialect } = this.#deps.database;
    const skipProjects = [...this.#waiting.values()].flatMap((projects) => [...projects]);
    const rows = await claimDueWebhookDeliveries(db, dialect, {
      now,
      limit: free,
      leaseMs: this.#leaseMs,
      skipProjects,
    });
    if (rows.length === 0) return { handled: 0, nextDueAt: await nextWebhookDueAt(db, now) };
    const projects = await findDeliveryProjects(
      db,
      rows.map((row) => row.project_id),
    );
    for (const row of rows) this.#track(this.#start(row, projects.get(row.project_id)));
    return { handled: rows.length };
  }

  /** Cuts the attempts in flight short (they are recorded and due again at once) and waits for them. */
  async drain(): Promise<void> {
    this.#stop.abort();
    while (this.#tasks.size > 0) await Promise.all([...this.#tasks]);
    await this.#sender.close();
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    void task.finally(() => this.#tasks.delete(task));
  }

  async #start(row: WebhookDeliveryRow, project: DeliveryProject | undefined): Promise<void> {
    const { db } = this.#deps.database;
    try {
      if (!project?.callback_url) {
        await this.#finish(row, row.url, { outcome: 'refused', durationMs: 0, error: CANCELLED }, Date.now());
        return;
      }
      // The project's current URL applies until the first attempt; after it the delivery keeps
      // its URL (one delivery id per event and URL).
      const url = row.attempt_count === 0 ? project.callback_url : row.url;
      const origin = originOf(url);
      const busy = this.#perOrigin.get(origin) ?? 0;
      if (busy >= this.#limits.maxPerOrigin) {
        let waiting = this.#waiting.get(origin);
        if (!waiting) this.#waiting.set(origin, (waiting = new Set()));
        waiting.add(row.project_id);
        await releaseWebhookDelivery(db, row.id);
        return;
      }
      this.#perOrigin.set(origin, busy + 1);
      this.#attempts++;
      try {
        await this.#attempt(row, url, project);
      } finally {
        this.#attempts--;
        const left = (this.#perOrigin.get(origin) ?? 1) - 1;
        if (left === 0) this.#perOrigin.delete(origin);
        else this.#perOrigin.set(origin, left);
        this.#waiting.delete(origin);
        this.#onCapacity();
      }
    } catch (error) {
      // The lease runs out and the delivery is attempted again: at least once, never lost.
      this.#deps.logger.error(
        { err: error, deliveryId: row.id },
        'webhook attempt failed unexpectedly; it is tried again when its lease expires',
      );
    }
  }

  async #attempt(row: WebhookDeliveryRow, url: string, project: DeliveryProject): Promise<void> {
    const secrets = liveWebhookSecrets(project, this.#deps.encryptionKey, Date.now());
    const result = await this.#sender.send(
      {
        url,
        deliveryId: row.id,
        attempt: row.attempt_count + 1,
        event: row.event,
        body: row.payload,
        secrets,
      },
      this.#stop.signal,
    );
    await this.#finish(row, url, result, Date.now());
  }

  async #finish(row: WebhookDeliveryRow, url: string, result: AttemptResult, now: number): Promise<void> {
    const attempt = row.attempt_count + 1;
    let status: WebhookDeliveryStatus;
    let dueAt: number | null = null;
    switch (result.outcome) {
      case 'acknowledged':
        status = 'succeeded';
        break;
      case 'interrupted':
        // svc cut it short, not the receiver: try again at once, wherever svc runs next.
        status = 'pending';
        dueAt = now;
        break;
      case 'refused':
        // Nothing was sent and nothing would be: failing now beats retrying into a wall.
        status = 'failed';
        break;
      default: {
        const retryAfterMs = parseRetryAfter(result.retryAfter, now);
        const delay = nextRetryDelay(this.#deps.config.webhookRetryScheduleMs, attempt, retryAfterMs);
        status = delay === undefined ? 'failed' : 'pending';
        dueAt = delay === undefined ? null : now + delay;
      }
    }
    await recordWebhookAttempt(
      this.#deps.database.db,
      {
        id: newId('att', now),
        delivery_id: row.id,
        attempt,
        at: now - result.durationMs,
        url,
        status_code: result.statusCode ?? null,
        duration_ms: result.durationMs,
        error: result.error ?? null,
        response_body: result.responseBody ?? null,
      },
      { status, url, dueAt, now },
    );
    this.#metrics.attempts.inc({ outcome: result.outcome });
    if (result.statusCode !== undefined || result.outcome === 'timeout' || result.outcome === 'network_error') {
      this.#metrics.latency.observe({ outcome: result.outcome }, result.durationMs / 1000);
    }
    if (status !== 'pending') this.#metrics.deliveries.inc({ outcome: status });
    const log = {
      deliveryId: row.id,
      attempt,
      origin: originOf(url),
      outcome: result.outcome,
      statusCode: result.statusCode,
      ms: result.durationMs,
      status,
    };
    if (result.outcome === 'acknowledged') this.#deps.logger.debug(log, 'webhook delivered');
    else this.#deps.logger.info({ ...log, error: result.error }, 'webhook attempt failed');
  }
}

/** The worker loop of webhook delivery; stopping it also finishes the attempts in flight. */
export class WebhookDeliveryLoop extends WorkerLoop {
  readonly #job: WebhookDeliveryJob;

  constructor(job: WebhookDeliveryJob, logger: Logger) {
    super(job, logger);
    this.#job = job;
    job.onCapacity(() => this.wake());
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.#job.drain();
  }
}
