import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { claimProjectHeads, moveLeases, queuedProjectsAfter } from '../db/claims.ts';
import type { MessageRow } from '../db/messages.ts';
import { currentTemplateCategories } from '../db/marketingMessages.ts';
import { findSendingProjects, type SendingProject } from '../db/projects.ts';
import { type MarketingMessagesMode, marketingMessagesModeOf, type ProductPolicy, productPolicyFor } from '../domain/marketingMessages.ts';
import { orderedValues } from '../domain/messageRequest.ts';
import { sendPaceOf } from '../domain/sendPace.ts';
import { providerCredentialsOf, SecretOpener } from '../projectSecrets.ts';
import type { MessageSubmission, ProviderCredentials, ProviderError, RichSendParameters, SendOutcome } from '../providers/provider.ts';
import { DeferredOutcomes } from './deferredOutcomes.ts';
import { OutcomeRecorder } from './dispatchOutcomes.ts';
import { ProjectRotation } from './projectRotation.ts';
import { WorkerHeartbeat } from './heartbeat.ts';
import type { WorkerDeps } from './deps.ts';
import { type SendRateGate, WINDOW_MS, windowBudget, windowStartOf } from './sendRate.ts';
import { type HeldMessage, SendLane } from './sendLane.ts';
import { SUBMISSION_LIMIT_DEFAULTS, SubmissionLimit } from './submissionLimit.ts';

// The dispatcher: a continuous pipeline from the messages table to the provider.
//
//   claim ──► lanes (one per sending number) ──► pacer ──► provider ──► outcome recorder
//
// - Claims are per project (the fair queues of db/claims.ts), each for about a second of its
//   number's sends, so a project's backlog never stands in front of another project's work.
//   Projects are served in turn (projectRotation.ts): a project that just got work first, then the
//   least recently served, a page of them per claim, however many tenants have a backlog.
// - Each number's lane is paced to its own throughput in 100 ms windows (sendRate.ts, shared by
//   every process on PostgreSQL). A granted message is submitted at once; nothing waits for
//   anything else: a slow or hanging call holds only its own slot.
// - Lanes take the free slots in turn: the lane of a project that just got work first, then the
//   others, each going to the back once it has sent. Slots promised to a reservation on its way
//   count as taken, so the process never has more going than its limit.
// - Each answer is recorded as soon as it arrives, group-committed with the others. How many
//   submissions go at once follows how fast outcomes are recorded (submissionLimit.ts), so no
//   submission waits long behind others for the writer.
// - Every held message (waiting or in flight) keeps its lease renewed until its outcome is
//   committed; a worker that dies loses its leases and another worker takes the messages over.
// - An outcome the database cannot take (it is away) is kept in memory and committed when it is
//   back (deferredOutcomes.ts): its message stays held, and is never sent again by this process.

const NOT_CONFIGURED: ProviderError = {
  code: 'provider_not_configured',
  title: 'Provider credentials missing',
  message: 'The project has no provider credentials; save them to send.',
};

const INTERNAL: ProviderError = {
  code: 'svc_submission_error',
  title: 'Submission failed',
  message: 'The message could not be submitted to the provider; it will be retried.',
};

/** The lane of projects without credentials: their sends fail at once (transiently), unpaced. */
const UNCONFIGURED = '';

export interface DispatcherOptions {
  /** Submissions in flight at once in this process, over all numbers (at most: see submissionLimit.ts). */
  maxInFlight: number;
  /** How the in-flight limit follows the time outcomes wait to be recorded (tests shorten it). */
  submissionLimit?: Partial<typeof SUBMISSION_LIMIT_DEFAULTS>;
  /** Outcomes kept in memory while the database cannot take them (default 100,000). */
  maxDeferredOutcomes?: number;
  /** How far ahead a lane is filled, in time at its number's pace. */
  lookaheadMs?: number;
  /**
   * The most messages one project's claim takes at once (default 100). Each claimed batch is
   * then submitted and recorded in turns that hold the event loop, which the API shares with SQLite.
   */
  claimLimit?: number;
  /** Messages held waiting in this process, over all lanes. */
  maxWaiting?: number;
  /** The lease of a claimed message; renewed while it is held. Default: submission timeout + 5 s. */
  leaseMs?: number;
  /** Claims are retried this often even without a wake-up (other processes, expired leases). */
  pollMs?: number;
}

/** Window time left below which a lane waits for the next window rather than reserve now. */
const RESERVE_GUARD_MS = 10;
/** A grant that comes back this close to its window's end is not used (it would spill over). */
const SEND_GUARD_MS = 5;
const MIN_REFILL_GAP_MS = 10;
/** A held message whose lease ends sooner than this (or a tenth of a lease) is not sent (#submitAll). */
const LEASE_END_MARGIN_MS = 1000;
const ERROR_BACKOFF_MS = 1000;
/** Projects with queued messages read from the database per claim (the rotation's sweep). */
const SWEEP_PAGE = 500;
/** Projects considered per claim, in rotation order. */
const PROJECTS_PER_CLAIM = 1000;
/** Newcomers are claimed even when the process holds its most waiting messages, up to this share more. */
const NEWCOMER_RESERVE = 0.1;

export class Dispatcher {
  readonly #deps: WorkerDeps;
  readonly #gate: SendRateGate;
  readonly #recorder: OutcomeRecorder;
  readonly #deferred: DeferredOutcomes;
  readonly #maxInFlight: number;
  readonly #lookaheadMs: number;
  readonly #claimLimit: number;
  readonly #maxWaiting: number;
  readonly #leaseMs: number;
  readonly #pollMs: number;
  readonly #lanes = new Map<string, SendLane>();
  // Opening a token costs a decryption: each is remembered while its sealed value stays the same.
  readonly #secrets: SecretOpener;
  /** Every message this worker holds, waiting or in flight, by id. */
  readonly #held = new Map<string, HeldMessage>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #metrics: ReturnType<typeof dispatchMetrics>;
  readonly #heartbeat: WorkerHeartbeat;
  readonly #rotation: ProjectRotation;
  readonly #limit: SubmissionLimit;
  /** Lanes with waiting messages, in the order they take free slots: newcomers' lanes, then the rest. */
  readonly #firstTurns = new Map<SendLane, true>();
  readonly #turns = new Map<SendLane, true>();
  #inFlight = 0;
  /** Answered, outcome not yet committed. */
  #recording = 0;
  /** Slots promised to reservations on their way to the gate. */
  #reserved = 0;
  #waiting = 0;
  #pumpQueued = false;
  #running = false;
  #refilling: Promise<void> | undefined;
  #refillAgain = false;
  #lastRefill = 0;
  #refillTimer: NodeJS.Timeout | undefined;
  #refillAt = 0;
  #tickTimer: NodeJS.Timeout | undefined;
  #renewTimer: NodeJS.Timeout | undefined;

  constructor(deps: WorkerDeps, gate: SendRateGate, options: DispatcherOptions) {
    this.#deps = deps;
    this.#gate = gate;
    this.#secrets = new SecretOpener(deps.encryptionKey);
    this.#recorder = new OutcomeRecorder(
      deps.database,
      { notifier: deps.notifier, autoSuppress: deps.config.autoSuppress, errorClassOf: deps.provider.errorClassOf, counters: deps.counters },
      deps.config.sendRetryScheduleMs,
      deps.costs,
    );
    this.#maxInFlight = options.maxInFlight;
    this.#lookaheadMs = options.lookaheadMs ?? 1000;
    this.#claimLimit = options.claimLimit ?? 100;
    this.#maxWaiting = options.maxWaiting ?? 10_000;
    this.#leaseMs = options.leaseMs ?? deps.provider.submissionTimeoutMs + 5000;
    this.#pollMs = options.pollMs ?? 1000;
    this.#limit = new SubmissionLimit({ ...SUBMISSION_LIMIT_DEFAULTS, ...options.submissionLimit, max: options.maxInFlight });
    this.#deferred = new DeferredOutcomes({
      limit: options.maxDeferredOutcomes ?? 100_000,
      record: (message, outcome) => this.#recorder.record(message, outcome),
      settled: (messageId) => this.#held.delete(messageId),
      logger: deps.logger,
      rememberMs: this.#leaseMs * 2,
    });
    this.#metrics = dispatchMetrics(deps.metrics, this, this.#deferred);
    this.#heartbeat = new WorkerHeartbeat(deps.database, deps.logger);
    this.#rotation = new ProjectRotation({
      sweep: (after, limit) => queuedProjectsAfter(deps.database.db, 'messages', after, limit),
      sweepPage: SWEEP_PAGE,
    });
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get waiting(): number {
    return this.#waiting;
  }

  /** The most submissions going at once now (started, outcome not yet committed). */
  get submissionLimit(): number {
    return this.#limit.value;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#renewTimer = setInterval(() => void this.#renewLeases(), Math.max(50, this.#leaseMs / 4));
    this.wake();
  }

  /** New work may be due (for these projects, when named): claim now. */
  wake(projectIds: readonly string[] = []): void {
    this.#rotation.announce(projectIds);
    if (!this.#running) return;
    if (this.#refilling) {
      this.#refillAgain = true;
      return;
    }
    this.#refilling = this.#refill().finally(() => {
      this.#refilling = undefined;
      if (this.#refillAgain) {
        this.#refillAgain = false;
        this.#scheduleRefill(MIN_REFILL_GAP_MS);
      }
    });
  }

  /**
   * Stops claiming, gives back what waits (due at once, for any worker), and waits for the
   * submissions in flight to be answered and recorded.
   */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#refillTimer);
    clearTimeout(this.#tickTimer);
    await this.#refilling;
    const waiting = [...this.#lanes.values()].flatMap((lane) => lane.takeAll());
    this.#waiting = 0;
    await this.#giveBack(waiting).catch((error) =>
      this.#deps.logger.warn({ err: error }, 'could not give back waiting messages; their leases will expire'),
    );
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
    if (this.#deferred.size > 0) await this.#deferred.flush();
    this.#deferred.stop();
    if (this.#deferred.size > 0) {
      this.#deps.logger.warn(
        { messages: this.#deferred.size },
        'send outcomes not committed at shutdown; their leases will run out and the messages be sent again',
      );
    }
    clearInterval(this.#renewTimer);
  }

  /** Claims again after `afterMs`, unless a claim is already planned sooner. */
  #scheduleRefill(afterMs: number): void {
    if (!this.#running) return;
    const at = Date.now() + Math.max(0, afterMs);
    if (this.#refillTimer && this.#refillAt <= at) return;
    clearTimeout(this.#refillTimer);
    this.#refillAt = at;
    this.#refillTimer = setTimeout(() => {
      this.#refillTimer = undefined;
      this.wake();
    }, at - Date.now());
  }

  async #refill(): Promise<void> {
    let nextIn = this.#pollMs;
    try {
      this.#lastRefill = Date.now();
      const now = Date.now();
      this.#heartbeat.beat(now);
      const { due, nextDueAt } = await this.#rotation.next(now, PROJECTS_PER_CLAIM);
      if (nextDueAt !== undefined) nextIn = Math.min(nextIn, nextDueAt - now);
      // Projects left out for lack of room while the room dealt went unused: claim them now, not at the next poll.
      if (due.length > 0 && (await this.#claim(due, now))) nextIn = MIN_REFILL_GAP_MS;
    } catch (error) {
      this.#deps.logger.error({ err: error }, 'dispatch claim failed');
      nextIn = ERROR_BACKOFF_MS;
    }
    this.#scheduleRefill(nextIn);
  }

  /**
   * Claims the heads of these projects, as far as the room allows. Returns whether to claim again
   * at once: some projects were left out for lack of room, yet the room dealt was not all used —
   * each project is dealt up to its lane's target, most hold fewer (at 1,000 projects of 7
   * messages, a claim dealt 100 projects all the room and took 700 messages, and the other 900
   * waited a poll each: bench/README, "The dispatcher's room").
   */
  async #claim(projectIds: string[], now: number): Promise<boolean> {
    const { database, config } = this.#deps;
    const found = new Map((await findSendingProjects(database.db, projectIds)).map((project) => [project.id, project]));
    const senders = new Map<string, { lane: SendLane; credentials: ProviderCredentials | undefined; marketing: MarketingMessagesMode }>();
    const quotas = new Map<string, number>();
    let room = this.#maxWaiting - this.#waiting;
    // A project that just got work is claimed even when the process holds its most, from a
    // reserve: else its first message waits for the next claim after room frees up.
    let reserve = Math.ceil(this.#maxWaiting * NEWCOMER_RESERVE);
    const newcomers = new Set<string>();
    // In the rotation's order (newcomers first): projects left out for lack of room keep their place for the next claim.
    let leftOut = false;
    for (const projectId of projectIds) {
      const newcomer = this.#rotation.isNewcomer(projectId);
      if (room <= 0 && !(newcomer && reserve > 0)) {
        leftOut = true;
        break;
      }
      const project = found.get(projectId);
      if (project === undefined) {
        this.#rotation.served(projectId, false); // erased meanwhile
        continue;
      }
      const credentials = this.#credentialsOf(project);
      const lane = credentials
        ? this.#lane(credentials.sender, sendPaceOf(project.provider_messages_per_second, config))
        : this.#lane(UNCONFIGURED, Number.POSITIVE_INFINITY);
      const fromReserve = room <= 0;
      const quota = Math.min(this.#targetOf(lane) - lane.size, fromReserve ? reserve : room);
      if (quota <= 0) {
        this.#rotation.served(project.id, true); // its number's lane is full: its turn is over
        continue;
      }
      quotas.set(project.id, quota);
      senders.set(project.id, { lane, credentials, marketing: marketingMessagesModeOf(project.marketing_messages) });
      if (newcomer) newcomers.add(project.id);
      if (fromReserve) reserve -= quota;
      else room -= quota;
    }
    if (quotas.size === 0) return false;
    const leaseEnd = now + this.#leaseMs;
    // A claim lost with the machine is claimed again once its lease runs out: not synced one by one.
    const rows = await database.withoutSync((db) =>
      claimProjectHeads(db, 'messages', { now, leaseMs: this.#leaseMs, quotas }),
    );
    const policies = await this.#productPolicies(rows, senders);
    const claimedPerProject = new Map<string, number>();
    for (const message of rows) {
      // Claimed again after its lease ran out (the database was away) while this process still
      // holds it — waiting, in flight, or its outcome kept uncommitted: never a second send.
      const holding = this.#held.get(message.id);
      if (holding || this.#deferred.holds(message.id, now)) {
        if (holding) holding.leaseEnd = leaseEnd;
        continue;
      }
      const sender = senders.get(message.project_id)!;
      const productPolicy = policies.get(message.id);
      const held: HeldMessage = { message, credentials: sender.credentials, leaseEnd, ...(productPolicy && { productPolicy }) };
      this.#held.set(message.id, held);
      sender.lane.push(held);
      this.#waiting++;
      claimedPerProject.set(message.project_id, (claimedPerProject.get(message.project_id) ?? 0) + 1);
    }
    for (const [projectId, { lane }] of senders) {
      const backlogged = (claimedPerProject.get(projectId) ?? 0) >= quotas.get(projectId)!;
      lane.backlogged = backlogged;
      this.#rotation.served(projectId, backlogged);
      if (lane.size === 0) continue;
      if (newcomers.has(projectId)) {
        this.#turns.delete(lane);
        this.#firstTurns.set(lane, true);
      } else if (!this.#firstTurns.has(lane) && !this.#turns.has(lane)) {
        this.#turns.set(lane, true);
      }
    }
    if (!this.#running) return false;
    this.#pumpAll();
    let dealt = 0;
    for (const quota of quotas.values()) dealt += quota;
    return leftOut && rows.length < dealt;
  }

  /**
   * The product policy of each claimed message that goes through the Marketing Messages API: its
   * project's setting is on and its template is MARKETING now (Meta may have re-categorised it
   * since the message was accepted). Read only for projects with the setting on.
   */
  async #productPolicies(
    rows: readonly MessageRow[],
    senders: ReadonlyMap<string, { marketing: MarketingMessagesMode }>,
  ): Promise<Map<string, ProductPolicy>> {
    const policies = new Map<string, ProductPolicy>();
    const byProject = new Map<string, MessageRow[]>();
    for (const message of rows) {
      // Meta re-categorises between UTILITY and MARKETING only: AUTHENTICATION stays as it is.
      if (senders.get(message.project_id)?.marketing === 'off' || message.category === 'AUTHENTICATION') continue;
      byProject.set(message.project_id, [...(byProject.get(message.project_id) ?? []), message]);
    }
    for (const [projectId, messages] of byProject) {
      const mode = senders.get(projectId)!.marketing;
      const categories = await currentTemplateCategories(this.#deps.database.db, projectId, messages.map((message) => message.template_id));
      for (const message of messages) {
        const policy = productPolicyFor(mode, categories.get(message.template_id) ?? message.category);
        if (policy) policies.set(message.id, policy);
      }
    }
    return policies;
  }

  #credentialsOf(project: SendingProject): ProviderCredentials | undefined {
    return providerCredentialsOf(project, this.#secrets);
  }

  #lane(phoneNumberId: string, maxPerSecond: number): SendLane {
    let lane = this.#lanes.get(phoneNumberId);
    if (!lane) {
      lane = new SendLane(phoneNumberId, maxPerSecond);
      this.#lanes.set(phoneNumberId, lane);
    }
    lane.maxPerSecond = maxPerSecond;
    return lane;
  }

  /** How many messages a lane holds ready: about `lookaheadMs` of its sends. */
  #targetOf(lane: SendLane): number {
    if (!Number.isFinite(lane.maxPerSecond)) return this.#claimLimit;
    return Math.max(1, Math.min(this.#claimLimit, Math.ceil((lane.maxPerSecond * this.#lookaheadMs) / 1000)));
  }

  /** Slots free for new submissions: under the ceiling and the limit, less those promised to reservations. */
  #room(): number {
    const going = this.#inFlight + this.#recording;
    return Math.min(this.#maxInFlight - this.#inFlight, this.#limit.value - going) - this.#reserved;
  }

  /** Starts as many of the lane's messages as its number's window and the free slots allow. */
  #pump(lane: SendLane): void {
    if (!this.#running || lane.reserving) return;
    if (lane.size === 0) {
      this.#firstTurns.delete(lane);
      this.#turns.delete(lane);
      return;
    }
    const room = this.#room();
    if (room <= 0) return; // a slot freeing up pumps again
    if (lane.phoneNumberId === UNCONFIGURED) {
      this.#submitAll(lane, lane.take(room));
      this.#tookTurn(lane);
      return;
    }
    const now = Date.now();
    const window = windowStartOf(now);
    if (lane.window !== window) {
      lane.window = window;
      lane.exhausted = false;
    }
    if (lane.exhausted || window + WINDOW_MS - now < RESERVE_GUARD_MS || windowBudget(lane.maxPerSecond, window) === 0) {
      this.#scheduleTick();
      return;
    }
    const wanted = Math.min(lane.size, room);
    lane.reserving = true;
    this.#reserved += wanted;
    this.#gate.reserve(lane.phoneNumberId, wanted, lane.maxPerSecond, now).then(
      (granted) => {
        lane.reserving = false;
        this.#reserved -= wanted;
        if (Date.now() > window + WINDOW_MS - SEND_GUARD_MS) {
          // Too late to send inside the window: the grant lapses, and the lane tries the next one.
          lane.exhausted = true;
        } else {
          if (granted < wanted) lane.exhausted = true;
          this.#submitAll(lane, lane.take(granted));
          if (granted > 0) this.#tookTurn(lane);
        }
        if (lane.size > 0) this.#pump(lane);
        // Slots promised and not used go to the lanes after it.
        if (granted < wanted) this.#pumpSoon();
      },
      (error: unknown) => {
        lane.reserving = false;
        this.#reserved -= wanted;
        this.#deps.logger.error({ err: error }, 'send pacing failed; retrying');
        setTimeout(() => this.#pump(lane), ERROR_BACKOFF_MS).unref();
      },
    );
  }

  /** The lane has sent: to the back of the turns (or out of them, if it has nothing left). */
  #tookTurn(lane: SendLane): void {
    this.#firstTurns.delete(lane);
    this.#turns.delete(lane);
    if (lane.size > 0) this.#turns.set(lane, true);
  }

  /** Wakes every waiting lane at the start of the next window. */
  #scheduleTick(): void {
    if (this.#tickTimer || !this.#running) return;
    const now = Date.now();
    this.#tickTimer = setTimeout(
      () => {
        this.#tickTimer = undefined;
        this.#pumpAll();
      },
      windowStartOf(now) + WINDOW_MS - now + 1,
    );
  }

  /** Offers the free slots to the lanes in turn, until none is left. */
  #pumpAll(): void {
    for (const turns of [this.#firstTurns, this.#turns]) {
      for (const lane of [...turns.keys()]) {
        if (this.#room() <= 0) return;
        this.#pump(lane);
      }
    }
  }

  /** Pumps once for all the slots freed in this turn of the event loop. */
  #pumpSoon(): void {
    if (!this.#running || this.#pumpQueued) return;
    this.#pumpQueued = true;
    setImmediate(() => {
      this.#pumpQueued = false;
      this.#pumpAll();
    });
  }

  #submitAll(lane: SendLane, batch: HeldMessage[]): void {
    this.#waiting -= batch.length;
    const now = Date.now();
    for (const held of batch) {
      // A lease that ran out (renewals failing, a stalled process) may have let another worker
      // claim the message or a cancel win (sending/cancelMessage.ts): never send it then.
      if (held.leaseEnd - now < Math.min(LEASE_END_MARGIN_MS, this.#leaseMs / 10)) {
        if (this.#held.get(held.message.id) === held) this.#held.delete(held.message.id);
        this.#deps.logger.warn({ messageId: held.message.id }, 'lease ran out before sending; the message is left to whoever holds it now');
        continue;
      }
      this.#track(this.#submit(held));
    }
    // Keep about a lookahead of work ready: refill a lane that runs low while more is queued.
    if (lane.backlogged && lane.size < this.#targetOf(lane) / 2) this.#requestRefill();
  }

  #requestRefill(): void {
    const sinceLast = Date.now() - this.#lastRefill;
    if (sinceLast >= MIN_REFILL_GAP_MS) this.wake();
    else this.#scheduleRefill(MIN_REFILL_GAP_MS - sinceLast);
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    void task.finally(() => this.#tasks.delete(task));
  }

  async #submit(held: HeldMessage): Promise<void> {
    this.#inFlight++;
    const started = performance.now();
    let outcome: SendOutcome;
    try {
      outcome = await this.#send(held);
    } finally {
      this.#inFlight--;
      this.#recording++;
      // A slot is free: whichever lane waits for one may go (once for all the answers of a turn).
      this.#pumpSoon();
    }
    const answered = performance.now();
    this.#metrics.submissions.inc({ outcome: outcome.kind });
    this.#metrics.latency.observe({ outcome: outcome.kind }, (answered - started) / 1000);
    try {
      await this.#recorder.record(held.message, outcome);
    } catch (error) {
      // Kept and committed later, the message still held (its lease renewed): sent once.
      if (this.#deferred.keep(held.message, outcome)) return;
      // No room left: the lease runs out and the message is sent again: at least once, never lost.
      this.#deps.logger.error({ err: error, messageId: held.message.id }, 'recording a send outcome failed');
    } finally {
      this.#recording--;
      this.#limit.recorded(performance.now() - answered, Date.now());
      this.#pumpSoon();
    }
    if (this.#held.get(held.message.id) === held) this.#held.delete(held.message.id);
  }

  async #send({ message, credentials, productPolicy }: HeldMessage): Promise<SendOutcome> {
    if (!credentials) return { kind: 'transient', error: NOT_CONFIGURED };
    try {
      return await this.#deps.provider.sendMessage({
        messageId: message.id,
        projectId: message.project_id,
        to: message.recipient,
        templateName: message.template_name,
        language: message.language,
        category: message.category,
        ...(productPolicy && { productPolicy }),
        ...parametersOf(message),
        credentials,
      });
    } catch (error) {
      this.#deps.logger.warn({ err: error, messageId: message.id }, 'provider submission threw');
      return { kind: 'transient', error: INTERNAL };
    }
  }

  /** Extends the leases that run out within half a lease; forgets messages another worker took. */
  async #renewLeases(): Promise<void> {
    const { database } = this.#deps;
    const now = Date.now();
    const byLease = new Map<number, string[]>();
    for (const [id, held] of this.#held) {
      if (held.leaseEnd - now > this.#leaseMs / 2) continue;
      const ids = byLease.get(held.leaseEnd);
      if (ids) ids.push(id);
      else byLease.set(held.leaseEnd, [id]);
    }
    const leaseEnd = now + this.#leaseMs;
    for (const [current, ids] of byLease) {
      try {
        const renewed = new Set(
          await moveLeases(database.db, 'messages', ids, current, { dueAt: leaseEnd, leaseEnd }),
        );
        const lost = new Set<string>();
        for (const id of ids) {
          const held = this.#held.get(id);
          if (!held) continue;
          if (renewed.has(id)) held.leaseEnd = leaseEnd;
          else lost.add(id);
        }
        if (lost.size > 0) this.#forget(lost);
      } catch (error) {
        this.#deps.logger.warn({ err: error }, 'lease renewal failed; retrying');
      }
    }
  }

  /** Messages whose lease another worker holds now: no longer ours to send. */
  #forget(ids: Set<string>): void {
    for (const id of ids) this.#held.delete(id);
    for (const lane of this.#lanes.values()) {
      const before = lane.size;
      lane.drop(ids);
      this.#waiting -= before - lane.size;
    }
    this.#deps.logger.warn({ messages: ids.size }, 'leases lost to another worker');
  }

  async #giveBack(waiting: HeldMessage[]): Promise<void> {
    const { database } = this.#deps;
    const byLease = new Map<number, string[]>();
    for (const held of waiting) {
      this.#held.delete(held.message.id);
      byLease.set(held.leaseEnd, [...(byLease.get(held.leaseEnd) ?? []), held.message.id]);
    }
    const now = Date.now();
    for (const [current, ids] of byLease) {
      await moveLeases(database.db, 'messages', ids, current, { dueAt: now, leaseEnd: null });
    }
  }
}

function dispatchMetrics(registry: Registry, dispatcher: Dispatcher, deferred: DeferredOutcomes) {
  const registers = [registry];
  new Gauge({
    name: 'svc_dispatch_outcomes_deferred',
    help: 'Send outcomes kept in memory because the database could not take them yet.',
    registers,
    collect() {
      this.set(deferred.size);
    },
  });
  new Counter({
    name: 'svc_dispatch_outcomes_deferred_total',
    help: 'Send outcomes whose commit failed and that were kept to commit later.',
    registers,
    collect() {
      this.reset();
      this.inc(deferred.kept);
    },
  });
  new Counter({
    name: 'svc_dispatch_outcomes_given_up_total',
    help: 'Send outcomes never committed (their messages are sent again), by reason: full (no room kept) or failing.',
    labelNames: ['reason'] as const,
    registers,
    collect() {
      this.reset();
      this.inc({ reason: 'full' }, deferred.givenUpFull);
      this.inc({ reason: 'failing' }, deferred.givenUpFailing);
    },
  });
  new Gauge({
    name: 'svc_dispatch_in_flight',
    help: 'Submissions to the provider this process is waiting on.',
    registers,
    collect() {
      this.set(dispatcher.inFlight);
    },
  });
  new Gauge({
    name: 'svc_dispatch_submission_limit',
    help: 'The most submissions this process keeps going at once now: lower while outcomes wait to be recorded.',
    registers,
    collect() {
      this.set(dispatcher.submissionLimit);
    },
  });
  new Gauge({
    name: 'svc_dispatch_waiting',
    help: 'Claimed messages waiting in this process for their number’s pace.',
    registers,
    collect() {
      this.set(dispatcher.waiting);
    },
  });
  return {
    submissions: new Counter({
      name: 'svc_dispatch_submissions_total',
      help: 'Submissions to the provider, by outcome: accepted, transient or permanent.',
      labelNames: ['outcome'] as const,
      registers,
    }),
    latency: new Histogram({
      name: 'svc_provider_submission_duration_seconds',
      help: 'Time from submitting a message to the provider’s answer, by outcome.',
      labelNames: ['outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
  };
}

/**
 * A message's parameters as the provider takes them: values in placeholder order ({{1}}, {{2}}…)
 * or, for a NAMED template, in the order given with their names; and a rich template's header and
 * button values, resolved when it was accepted.
 */
function parametersOf(message: MessageRow): Pick<
  MessageSubmission,
  'bodyParameters' | 'headerParameters' | 'bodyParameterNames' | 'headerParameterNames' | 'rich'
> {
  const variables = JSON.parse(message.variables) as Record<string, string>;
  const headerVariables = message.header_variables ? (JSON.parse(message.header_variables) as Record<string, string>) : undefined;
  if (message.rich_parameters === null) {
    return { bodyParameters: orderedValues(variables), headerParameters: orderedValues(headerVariables) };
  }
  const rich = JSON.parse(message.rich_parameters) as RichSendParameters;
  if (!rich.named) return { bodyParameters: orderedValues(variables), headerParameters: orderedValues(headerVariables), rich };
  return {
    bodyParameters: Object.values(variables),
    bodyParameterNames: Object.keys(variables),
    headerParameters: Object.values(headerVariables ?? {}),
    headerParameterNames: Object.keys(headerVariables ?? {}),
    rich,
  };
}
