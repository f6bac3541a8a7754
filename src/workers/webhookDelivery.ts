import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import { queuedProjectsAfter } from '../db/claims.ts';
import type { Database } from '../db/database.ts';
import type { WebhookDeliveryStatus } from '../db/tables.ts';
import {
  type DeliveryProject,
  findDeliveryProjects,
  latestAttemptOf,
  listWebhookCircuits,
  moveDeliveryLeases,
  originOf,
  type WebhookDeliveryRow,
} from '../db/webhookDeliveries.ts';
import { findEndpointsOfProjects, type WebhookEndpointRow } from '../db/webhookEndpoints.ts';
import { isRebuiltPayload, withPayloads } from '../db/webhookPayloads.ts';
import { newId } from '../domain/ids.ts';
import { nextRetryDelay, parseRetryAfter } from '../domain/webhookRetry.ts';
import { liveWebhookSecrets, SecretOpener } from '../projectSecrets.ts';
import { type AttemptResult, WebhookSender } from '../webhooks/deliver.ts';
import type { Job } from './loop.ts';
import { ProjectRotation } from './projectRotation.ts';
import { WorkerLoop } from './loop.ts';
import { type CircuitTransition, verdictOf, WebhookCircuits } from './webhookCircuits.ts';
import { webhookMetrics } from './webhookMetrics.ts';
import { WebhookRecorder } from './webhookRecorder.ts';
import { DEFAULT_WEBHOOK_LIMITS, type SlotRequest, type WebhookDeliveryLimits, WebhookSlots } from './webhookSlots.ts';

// The webhook worker: a continuous pipeline from the webhook_deliveries queue to the receivers.
//
//   projects with due deliveries ──► slots dealt round-robin ──► per-project claims ──► attempts
//                                                                            └──► group-committed records
//
// - Each claim first takes a page of the projects with due work, in turn (projectRotation.ts: a
//   project that just got work first, then the least recently served), reads where each one
//   sends (the origins of its callback URL and of its enabled endpoints), and deals the free slots
//   among them (webhookSlots.ts): bounded overall and per origin, one per project and origin per
//   round, with a reserve for newcomers. A claim costs a page, however many tenants wait.
//   Then it claims, per project, only what it was dealt: nothing is claimed that cannot start,
//   and no project's backlog stands in front of another's head.
// - An attempt starts the moment it is claimed; its slot frees when the receiver answers, and the
//   worker claims again at once. Answers are recorded by group commit (webhookRecorder.ts).
// - A receiver that keeps failing is held back by its circuit (webhookCircuits.ts): its
//   deliveries are not claimed, one probe at a time tries it after a cool-down.

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
const ENDPOINT_DELETED = 'not sent: the webhook endpoint was deleted';
const ENDPOINT_DISABLED = 'not sent: the webhook endpoint is disabled';
/** A body rebuilt from its event when the event is gone (never, while retention keeps them together). */
const EVENT_GONE = 'not sent: its event no longer exists';
/** Deliveries of a project without a callbackUrl claimed at once: they are failed, never sent. */
const CANCEL_BATCH = 100;
const CIRCUIT_THRESHOLD = 5;
const MAX_COOLDOWN_MS = 5 * 60_000;
/** How often circuits opened by other processes are read. */
const CIRCUIT_REFRESH_MS = 1000;
/** Projects with pending deliveries read from the database per claim (the rotation's sweep). */
const SWEEP_PAGE = 500;
/**
 * The shortest gap between two sweeps while due projects are known. Answers come back to back
 * under load, and each starts a turn: at 3,000 tenants with 1,000,000 messages a sweep per turn
 * cost 2.0 ms, 415 times per 10,000 messages (bench/README, stop 33). Work nobody announced (a
 * retry falling due, another process's) is found within this gap per page of projects.
 */
const MIN_SWEEP_GAP_MS = 200;

export class WebhookDeliveryJob implements Job {
  readonly name = 'webhook-delivery';
  readonly #deps: WebhookDeliveryDeps;
  readonly #leaseMs: number;
  readonly #sender: WebhookSender;
  // Each attempt is signed with the project's secrets: opened once per sealed value, not per attempt.
  readonly #secrets: SecretOpener;
  readonly #slots: WebhookSlots;
  readonly #circuits: WebhookCircuits;
  readonly #recorder: WebhookRecorder;
  readonly #metrics: ReturnType<typeof webhookMetrics>;
  readonly #stop = new AbortController();
  readonly #tasks = new Set<Promise<void>>();
  readonly #maxUnrecorded: number;
  /** Claimed and not yet recorded: bounds what waits for the group commit. */
  #unrecorded = 0;
  /** The project served last; the next claim deals from the one after it. */
  readonly #rotation: ProjectRotation;
  // The projects whose receivers were all held back when last dealt, until they are dealt again:
  // a deal sees one page of the rotation, so the others keep their last state (the held gauge).
  readonly #heldProjects = new Set<string>();
  #circuitsReadAt = Number.NEGATIVE_INFINITY;
  #onCapacity: () => void = () => {};

  constructor(deps: WebhookDeliveryDeps) {
    this.#deps = deps;
    this.#secrets = new SecretOpener(deps.encryptionKey);
    const limits = deps.limits ?? DEFAULT_WEBHOOK_LIMITS;
    this.#leaseMs = webhookLeaseMs(deps.config.webhookTimeoutMs);
    this.#sender = new WebhookSender({
      timeoutMs: deps.config.webhookTimeoutMs,
      allowPrivate: deps.config.allowPrivateCallbacks,
      connectionsPerOrigin: limits.maxPerOrigin,
    });
    this.#slots = new WebhookSlots(limits);
    this.#maxUnrecorded = 2 * limits.maxInFlight;
    this.#circuits = new WebhookCircuits({
      threshold: CIRCUIT_THRESHOLD,
      baseCooldownMs: deps.config.webhookRetryScheduleMs[0] ?? 5000,
      maxCooldownMs: MAX_COOLDOWN_MS,
    });
    this.#recorder = new WebhookRecorder(deps.database);
    this.#rotation = new ProjectRotation({
      sweep: (after, limit) => queuedProjectsAfter(deps.database.db, 'webhook_deliveries', after, limit),
      sweepPage: SWEEP_PAGE,
      minSweepGapMs: MIN_SWEEP_GAP_MS,
    });
    this.#metrics = webhookMetrics(deps.metrics, this, deps.database);
  }

  /** Attempts in flight now. */
  get inFlight(): number {
    return this.#slots.inFlight;
  }

  get openCircuits(): number {
    return this.#circuits.openCount;
  }

  get heldProjects(): readonly string[] {
    return [...this.#heldProjects];
  }

  /** These projects just got deliveries (a commit's notification). */
  announce(projectIds: readonly string[]): void {
    this.#rotation.announce(projectIds);
  }

  /** Called whenever an attempt is answered or recorded: a slot, or an ordered event, may have freed up. */
  onCapacity(callback: () => void): void {
    this.#onCapacity = callback;
  }

  async runOnce(now: number): Promise<{ handled: number; nextDueAt?: number }> {
    // Let the answers that have arrived meanwhile free their slots first: one claim then
    // serves them all, not one claim per answer.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.#stop.signal.aborted) return { handled: 0 };
    const { db } = this.#deps.database;
    await this.#readCircuits(now);
    let nextDueAt = this.#circuits.nextProbeAt(now);
    if (this.#slots.full || this.#unrecorded >= this.#maxUnrecorded) return { handled: 0 };
    // As many projects as could each start an attempt now.
    const page = await this.#rotation.next(now, this.#slots.free);
    const ordered = page.due;
    if (page.nextDueAt !== undefined) nextDueAt = Math.min(nextDueAt ?? page.nextDueAt, page.nextDueAt);
    const idle = { handled: 0, ...(nextDueAt !== undefined && { nextDueAt }) };
    if (ordered.length === 0) return idle;

    const projects = await findDeliveryProjects(db, ordered);
    const endpoints = new Map((await findEndpointsOfProjects(db, ordered)).map((row) => [row.id, row]));
    const quotas = this.#deal(
      ordered.flatMap((projectId) => projects.get(projectId) ?? []),
      [...endpoints.values()],
      now,
    );
    for (const projectId of ordered) {
      if (projects.has(projectId)) continue;
      this.#rotation.served(projectId, false); // erased
      this.#heldProjects.delete(projectId);
    }
    if (quotas.size === 0) return idle;
    // Message status events' bodies are rebuilt from their events (committed before their
    // deliveries existed), read apart from the writer's group commit.
    const claimedRows = await this.#recorder.claim({ now, leaseMs: this.#leaseMs, quotas });
    const rows = await withPayloads(this.#deps.database.reader, claimedRows);
    const claimed = new Map<string, number>();
    for (const row of rows) claimed.set(row.project_id, (claimed.get(row.project_id) ?? 0) + 1);
    for (const [projectId, quota] of quotas) this.#rotation.served(projectId, (claimed.get(projectId) ?? 0) >= quota);
    this.#unrecorded += rows.length;
    for (const row of rows) {
      const destination = destinationOf(row, projects.get(row.project_id), endpoints);
      this.#track(this.#handle(row, projects.get(row.project_id), destination, now + this.#leaseMs));
    }
    return rows.length > 0 ? { handled: rows.length } : idle;
  }

  /** Cuts the attempts in flight short (they are recorded and due again at once) and waits for them. */
  async drain(): Promise<void> {
    this.#stop.abort();
    while (this.#tasks.size > 0) await Promise.all([...this.#tasks]);
    await this.#sender.close();
  }

  /**
   * How many deliveries each project may start now: a request per receiver origin it sends to
   * (its callback URL's, its enabled endpoints'), each bounded by that origin's circuit.
   */
  #deal(projects: DeliveryProject[], endpoints: readonly WebhookEndpointRow[], now: number): Map<string, number> {
    const requests: SlotRequest[] = [];
    const cancelled: string[] = [];
    const held: string[] = [];
    const origins = new Map<string, Set<string>>();
    for (const project of projects) {
      origins.set(project.id, new Set(project.callback_url ? [originOf(project.callback_url)] : []));
    }
    for (const endpoint of endpoints) {
      if (endpoint.enabled === 1) origins.get(endpoint.project_id)?.add(originOf(endpoint.url));
    }
    for (const project of projects) {
      const projectOrigins = origins.get(project.id)!;
      if (projectOrigins.size === 0) {
        cancelled.push(project.id);
        continue;
      }
      let open = false;
      for (const origin of projectOrigins) {
        const allowance = this.#circuits.allowance(origin, now);
        if (allowance > 0) {
          requests.push({ projectId: project.id, origin, allowance });
          open = true;
        }
      }
      if (!open) held.push(project.id);
    }
    for (const project of projects) this.#heldProjects.delete(project.id);
    for (const projectId of held) this.#heldProjects.add(projectId);
    const free = this.#slots.free;
    const quotas = this.#slots.share(requests);
    // A project whose receivers are all held back, or that got no slot while slots were left (its
    // own bounds), has had its turn: it waits at the back of the rotation. One left out because
    // the slots ran out keeps its place.
    const dealt = [...quotas.values()].reduce((sum, quota) => sum + quota, 0);
    for (const projectId of held) this.#rotation.served(projectId, true);
    if (dealt < free) {
      for (const { projectId } of requests) if (!quotas.has(projectId)) this.#rotation.served(projectId, true);
    }
    for (const projectId of cancelled) quotas.set(projectId, CANCEL_BATCH);
    return quotas;
  }

  async #readCircuits(now: number): Promise<void> {
    if (now - this.#circuitsReadAt < CIRCUIT_REFRESH_MS) return;
    this.#circuitsReadAt = now;
    const adopted = this.#circuits.adopt(await listWebhookCircuits(this.#deps.database.db), now);
    for (const origin of adopted) {
      this.#deps.logger.info({ origin }, 'webhook receiver circuit opened by another process: its deliveries wait');
    }
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    void task.finally(() => this.#tasks.delete(task));
  }

  async #handle(
    row: WebhookDeliveryRow,
    project: DeliveryProject | undefined,
    destination: Destination,
    leaseEnd: number,
  ): Promise<void> {
    try {
      if (!project || 'refusal' in destination || isRebuiltPayload(row)) {
        const error = 'refusal' in destination ? destination.refusal : !project ? CANCELLED : EVENT_GONE;
        await this.#finish(row, row.url, { outcome: 'refused', durationMs: 0, error }, Date.now());
        return;
      }
      const { url } = destination;
      const origin = originOf(url);
      const now = Date.now();
      // Claims were dealt by the circuits as they stood: the first delivery to a half-open origin
      // probes it; any other delivery to an origin that is not closed (a circuit that opened since,
      // a retry still bound to an older URL) waits for it.
      const probe = this.#circuits.allowance(origin, now) === 1;
      if (probe) this.#circuits.beginProbe(origin);
      const heldUntil = this.#circuits.heldUntil(origin, now);
      if (!probe && heldUntil !== undefined) {
        await this.#holdBack(row, leaseEnd, heldUntil);
        return;
      }
      const result = await this.#attempt(row, url, project, probe);
      await this.#finish(row, url, result, Date.now());
    } catch (error) {
      // The lease runs out and the delivery is attempted again: at least once, never lost.
      this.#deps.logger.error(
        { err: error, deliveryId: row.id },
        'webhook attempt failed unexpectedly; it is tried again when its lease expires',
      );
    } finally {
      this.#unrecorded--;
      this.#onCapacity();
    }
  }

  async #attempt(row: WebhookDeliveryRow, url: string, project: DeliveryProject, probe: boolean): Promise<AttemptResult> {
    const origin = originOf(url);
    if (probe) this.#deps.logger.info({ origin, deliveryId: row.id }, 'probing a webhook receiver whose circuit is open');
    this.#slots.take(project.id, origin);
    let result: AttemptResult;
    try {
      const secrets = liveWebhookSecrets(project, this.#secrets, Date.now());
      result = await this.#sender.send(
        { url, deliveryId: row.id, attempt: row.attempt_count + 1, event: row.event, body: row.payload, secrets },
        this.#stop.signal,
      );
    } finally {
      this.#slots.give(project.id, origin);
      this.#onCapacity();
    }
    const transition = this.#circuits.record(origin, verdictOf(result), { probe, now: Date.now(), error: result.error });
    if (transition) this.#track(this.#announce(transition));
    return result;
  }

  /** Gives a claimed delivery back, due when its receiver's circuit may be probed: not an attempt. */
  async #holdBack(row: WebhookDeliveryRow, leaseEnd: number, until: number): Promise<void> {
    await moveDeliveryLeases(this.#deps.database.db, row.project_id, [row.id], leaseEnd, { dueAt: until, leaseEnd: null });
    this.#deps.logger.info(
      { deliveryId: row.id, origin: originOf(row.url), until: new Date(until).toISOString() },
      'webhook delivery held back: its receiver’s circuit is open',
    );
  }

  async #announce(transition: CircuitTransition): Promise<void> {
    const { logger } = this.#deps;
    try {
      if (transition.to === 'open') {
        const { row, reopened } = transition;
        this.#metrics.circuitTransitions.inc({ to: reopened ? 'reopened' : 'open' });
        logger.warn(
          {
            origin: row.origin,
            failures: row.failures,
            lastError: row.last_error,
            retryAt: new Date(row.retry_at).toISOString(),
          },
          reopened
            ? 'webhook receiver still failing: circuit open again, for longer'
            : 'webhook receiver failing: circuit open, its deliveries wait',
        );
        await this.#recorder.circuitOpened(row);
      } else {
        this.#metrics.circuitTransitions.inc({ to: 'closed' });
        logger.info(
          { origin: transition.origin, openForMs: Date.now() - transition.openedAt },
          'webhook receiver answering again: circuit closed',
        );
        await this.#recorder.circuitClosed(transition.origin);
      }
    } catch (error) {
      logger.warn({ err: error }, 'could not record a webhook circuit change');
    }
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
    const previous = latestAttemptOf(row);
    await this.#recorder.attempt({
      ...(previous && { previous: { ...previous, id: newId('att', previous.at) } }),
      attempt: {
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
      update: { projectId: row.project_id, status, url, dueAt, now },
    });
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

type Destination = { url: string } | { refusal: string };

/**
 * Where a claimed delivery goes now. The callbackUrl: the project's current one until the first
 * attempt, then the delivery keeps its URL (one delivery id per event and URL). An endpoint: its
 * current URL, always (a manual retry follows an endpoint that moved); a disabled or deleted
 * endpoint gets nothing.
 */
function destinationOf(
  row: WebhookDeliveryRow,
  project: DeliveryProject | undefined,
  endpoints: ReadonlyMap<string, WebhookEndpointRow>,
): Destination {
  if (row.endpoint_id === null) {
    if (!project?.callback_url) return { refusal: CANCELLED };
    return { url: row.attempt_count === 0 ? project.callback_url : row.url };
  }
  const endpoint = endpoints.get(row.endpoint_id);
  if (!endpoint) return { refusal: ENDPOINT_DELETED };
  if (endpoint.enabled !== 1) return { refusal: ENDPOINT_DISABLED };
  return { url: endpoint.url };
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
