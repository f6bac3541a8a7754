import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Counter } from 'prom-client';
import type { RetentionConfig } from '../config.ts';
import type { Database, Db } from '../db/database.ts';
import {
  checkpointAfterStep,
  compactCountsStep,
  DAY_MS,
  finishPurge,
  type OwnRetention,
  type PassBounds,
  projectIdsAfter,
  projectsWithOwnRetention,
  purgeAgedStep,
  purgeBatchesStep,
  purgeDeliveriesStep,
  purgeMessagesStep,
  type PurgedCounts,
  type PurgedKind,
  renewPurgeLease,
  purgeScopes,
  returnsFreedPages,
  type Step,
  takePurgeLease,
  vacuumStep,
} from '../db/retention.ts';
import { batchedPurgeBelow, dropPeriod, FAMILIES, hasTimePartitions, makePeriodsAhead, periodFor, periodsEndedBefore } from '../db/partitions.ts';
import { deleteStaleLinks } from '../db/recipientLinks.ts';
import { expireCosts } from '../db/messageCosts.ts';
import type { WorkerDeps } from './deps.ts';
import type { Job } from './loop.ts';

/** One step of a run, as recorded: the pass, the project it was limited to, what it removed. */
export interface RecordedStep {
  pass:
    | 'partitions'
    | 'messages'
    | 'webhook_deliveries'
    | 'batches'
    | 'template_status_events'
    | 'sandbox_submissions'
    | 'recipient_links'
    | 'message_counts'
    | 'message_costs'
    | 'vacuum';
  projectId?: string;
  deleted: PurgedCounts;
  scanned: number;
}

export interface PurgeRun {
  /** Every step, in order (a step is one transaction). */
  steps: AsyncGenerator<RecordedStep, void>;
  /** After the steps: the hour every project's counters are rolled up through. */
  countsRolledUpThrough(): number;
}

const PAGES_PER_VACUUM_STEP = 512; // 2 MiB of 4 KiB pages per step
const PROJECTS_PER_COUNTS_STEP = 50;

/**
 * A purge run at `now`: every kind of data past its retention, step by step. Each step is one
 * short transaction of at most `batchSize` rows of its kind; the caller decides when to take the
 * next one (the job yields to the event loop between steps), so a run never holds the database
 * for long, however much it has to remove.
 */
export function startPurgeRun(
  database: Database,
  retention: Omit<RetentionConfig, 'intervalMs'>,
  now: number,
  countsRolledUpThrough: number,
): PurgeRun {
  const limit = retention.batchSize;
  const db = database.db;
  // A purge a crash loses is redone by the next run: its commits are not synced one by one. On
  // SQLite the step then copies what it wrote from the WAL into the file itself, so the cost is
  // the step's (and paced with it), not that of the next request's commit.
  const unsynced = <T>(work: (db: Db) => Promise<T>) =>
    database.withoutSync(async (db) => {
      const result = await work(db);
      await checkpointAfterStep(db);
      return result;
    });
  const day = (ms: number) => ms - (ms % DAY_MS);
  const rollUpTo = Math.max(countsRolledUpThrough, day(now - retention.analyticsHourlyMs));

  async function* pass(
    name: RecordedStep['pass'],
    step: (bounds: PassBounds) => Promise<Step>,
    cutoff: number,
    projectId?: string,
  ): AsyncGenerator<RecordedStep> {
    let after: string | undefined = '';
    while (after !== undefined) {
      const result: Step = await step({ cutoff, after, limit, ...(projectId !== undefined && { projectId }) });
      yield { pass: name, ...(projectId !== undefined && { projectId }), deleted: result.deleted, scanned: result.scanned };
      after = result.next;
    }
  }

  async function* steps(): AsyncGenerator<RecordedStep, void> {
    const messagesCutoff = now - retention.messagesMs;
    const deliveriesCutoff = now - retention.webhookDeliveriesMs;
    const own = await projectsWithOwnRetention(db);

    // PostgreSQL: whole periods past retention go as dropped partitions first (db/partitions.ts);
    // the batched passes below then find only what a period kept, the default partition's rows
    // and every project's shorter retention. Periods ahead are made by the wall clock, which
    // makes the ids.
    const idsBelow: { messages?: string; webhook_deliveries?: string } = {};
    if (hasTimePartitions(db)) {
      for (const family of FAMILIES) {
        const retentionMs = family.name === 'messages' ? retention.messagesMs : retention.webhookDeliveriesMs;
        await makePeriodsAhead(db, family, Date.now(), periodFor(retentionMs));
        for (const period of await periodsEndedBefore(db, family, now - retentionMs)) {
          const dropped = await dropPeriod(db, family, period, now - retentionMs);
          if (dropped === undefined) continue;
          yield { pass: 'partitions', deleted: { [family.lead.table]: dropped.rows[0], [family.child.table]: dropped.rows[1] }, scanned: dropped.rows[0] };
        }
        const limit = await batchedPurgeBelow(db, family, now - retentionMs);
        if (limit !== undefined) idsBelow[family.name] = limit;
      }
    }

    const cutoffs = {
      messages: (project: OwnRetention | undefined) => {
        const ms = project?.message_retention_ms ?? null;
        return ms === null ? messagesCutoff : now - ms;
      },
      deliveries: (project: OwnRetention | undefined) => {
        const ms = Math.min(project?.webhook_delivery_retention_ms ?? Infinity, project?.message_retention_ms ?? Infinity);
        return ms === Infinity || ms >= retention.webhookDeliveriesMs ? deliveriesCutoff : now - ms;
      },
    };
    for await (const scope of purgeScopes(db, own, cutoffs, PROJECTS_PER_COUNTS_STEP)) {
      // The operator's retention leaves the rows of periods not yet ended to their drop; a
      // project's shorter one is purged in batches wherever its rows are.
      if (scope.pass === 'messages') {
        const limit = scope.cutoff === messagesCutoff ? idsBelow.messages : undefined;
        yield* pass('messages', (b) => unsynced((db) => purgeMessagesStep(db, { ...b, idsBelow: limit })), scope.cutoff, scope.projectId);
      } else {
        const { projectId } = scope;
        const limit = scope.cutoff === deliveriesCutoff ? idsBelow.webhook_deliveries : undefined;
        yield* pass('webhook_deliveries', (b) => unsynced((db) => purgeDeliveriesStep(db, { ...b, projectId, idsBelow: limit })), scope.cutoff, projectId);
      }
    }
    yield* pass('batches', (b) => unsynced((db) => purgeBatchesStep(db, b)), messagesCutoff);
    for (const project of own) {
      if (project.message_retention_ms === null) continue;
      yield* pass('batches', (b) => unsynced((db) => purgeBatchesStep(db, b)), now - project.message_retention_ms, project.id);
    }
    yield* pass('template_status_events', (b) => unsynced((db) => purgeAgedStep(db, 'template_status_events', b)), messagesCutoff);
    yield* pass('sandbox_submissions', (b) => unsynced((db) => purgeAgedStep(db, 'sandbox_submissions', b)), now - retention.sandboxMs);

    // A recipient's joined identities (BSUIDs, phone) outlive no message they join: kept as long
    // as messages after they were last seen, project by project through (project_id, seen_at).
    const ownMessages = new Map(own.map((project) => [project.id, project.message_retention_ms]));
    for (let afterProject = ''; ; ) {
      const projects = await projectIdsAfter(db, afterProject, PROJECTS_PER_COUNTS_STEP);
      for (const projectId of projects) {
        const ms = ownMessages.get(projectId) ?? null;
        const cutoff = ms === null ? messagesCutoff : now - ms;
        for (let deleted = limit; deleted >= limit; ) {
          deleted = await unsynced((db) => deleteStaleLinks(db, projectId, cutoff, limit));
          if (deleted > 0) yield { pass: 'recipient_links', projectId, deleted: { recipient_links: deleted }, scanned: deleted };
        }
      }
      if (projects.length < PROJECTS_PER_COUNTS_STEP) break;
      afterProject = projects.at(-1)!;
    }

    // Counters: whole days of hourly rows since the last run become daily rows; rows past the
    // analytics retention go. Project by project through the counters' primary key.
    const window = {
      from: countsRolledUpThrough,
      to: rollUpTo,
      expireBefore: day(now - retention.analyticsMs),
      limit,
    };
    let afterProject = '';
    for (;;) {
      const projects = await projectIdsAfter(db, afterProject, PROJECTS_PER_COUNTS_STEP);
      for (const projectId of projects) {
        for (let more = true; more; ) {
          const result = await unsynced((db) => compactCountsStep(db, projectId, window));
          more = result.more;
          if ((result.deleted.message_counts ?? 0) + (result.deleted.message_counts_rolled_up ?? 0) > 0) {
            yield { pass: 'message_counts', projectId, deleted: result.deleted, scanned: 0 };
          }
        }
        // Cost counters and reconciliations: as long as the message counters.
        for (let more = true; more; ) {
          const expired = await unsynced((db) => db.transaction().execute((trx) => expireCosts(trx, projectId, window.expireBefore, limit)));
          more = expired.more;
          if (expired.deleted > 0) yield { pass: 'message_costs', projectId, deleted: { message_costs: expired.deleted }, scanned: 0 };
        }
      }
      if (projects.length < PROJECTS_PER_COUNTS_STEP) break;
      afterProject = projects.at(-1)!;
      yield { pass: 'message_counts', deleted: {}, scanned: projects.length };
    }

    // Hand the pages freed back to the file system (SQLite), a bounded number per step.
    if (await returnsFreedPages(db)) {
      for (let free = Infinity; free > 0; ) {
        free = await unsynced((db) => vacuumStep(db, PAGES_PER_VACUUM_STEP));
        yield { pass: 'vacuum', deleted: {}, scanned: 0 };
      }
    }
  }

  return { steps: steps(), countsRolledUpThrough: () => rollUpTo };
}

/** Runs a whole purge at `now` and returns its steps (tests, the CLI). */
export async function purgeNow(
  database: Database,
  retention: Omit<RetentionConfig, 'intervalMs'>,
  now: number,
  countsRolledUpThrough = 0,
): Promise<{ steps: RecordedStep[]; countsRolledUpThrough: number }> {
  const run = startPurgeRun(database, retention, now, countsRolledUpThrough);
  const steps: RecordedStep[] = [];
  for await (const step of run.steps) steps.push(step);
  return { steps, countsRolledUpThrough: run.countsRolledUpThrough() };
}

/** Adds up what steps removed, by kind. */
export function totalPurged(steps: readonly { deleted: PurgedCounts }[]): PurgedCounts {
  const total: PurgedCounts = {};
  for (const step of steps) {
    for (const [kind, count] of Object.entries(step.deleted) as [PurgedKind, number][]) {
      total[kind] = (total[kind] ?? 0) + count;
    }
  }
  return total;
}

const LEASE_MS = 60_000;
/** Steps per turn of the worker loop: a turn stays short, and the loop runs the next one at once. */
const STEPS_PER_TURN = 20;
/** The pause after a step, in multiples of the step's time (measured: bench/README.md). */
const PAUSE_FACTOR = 6;
/** How often a process asks whether a run is due when another process did the last one. */
const CHECK_EVERY_MS = 60_000;

/**
 * The periodic purge, in the worker processes: one process at a time (the lease in
 * retention_state), a run every SVC_RETENTION_INTERVAL, a few steps per turn of its loop. Rows
 * purged are counted per kind (svc_retention_purged_rows_total) and each run logs one line.
 */
export function createRetentionJob(deps: WorkerDeps): Job {
  const { database, logger } = deps;
  const retention = deps.config.retention;
  const holder = randomUUID();
  const purged = new Counter({
    name: 'svc_retention_purged_rows_total',
    help: 'Rows removed by the retention purge (message_counts_rolled_up: hourly counters folded into daily ones)',
    labelNames: ['kind'],
    registers: [deps.metrics],
  });
  let run: { purge: PurgeRun; startedAt: number; steps: number; totals: PurgedCounts } | undefined;
  // The first look comes an interval (at most a minute) after start: a starting process has
  // other work first, and short-lived processes (tests, one-off commands) never purge.
  let checkAt: number | undefined;

  async function finish(now: number): Promise<void> {
    await finishPurge(database.db, holder, now + retention.intervalMs, run!.purge.countsRolledUpThrough());
    logger.info({ purged: run!.totals, steps: run!.steps, ms: now - run!.startedAt }, 'retention purge run');
    run = undefined;
    checkAt = now + retention.intervalMs;
  }

  return {
    name: 'retention',
    async runOnce(now) {
      if (run === undefined) {
        checkAt ??= now + Math.min(CHECK_EVERY_MS, retention.intervalMs);
        if (now < checkAt) return { handled: 0, nextDueAt: checkAt };
        const rolledUpThrough = await takePurgeLease(database.db, holder, now, LEASE_MS);
        if (rolledUpThrough === undefined) {
          checkAt = now + Math.min(CHECK_EVERY_MS, retention.intervalMs);
          return { handled: 0, nextDueAt: checkAt };
        }
        run = { purge: startPurgeRun(database, retention, now, rolledUpThrough), startedAt: now, steps: 0, totals: {} };
      } else if (!(await renewPurgeLease(database.db, holder, now, LEASE_MS))) {
        await run.purge.steps.return();
        run = undefined;
        checkAt = now + CHECK_EVERY_MS;
        return { handled: 0, nextDueAt: checkAt };
      }
      for (let i = 0; i < STEPS_PER_TURN; i++) {
        const stepStartedAt = performance.now();
        const next = await run.purge.steps.next();
        if (next.done) {
          await finish(Date.now());
          return { handled: 0, nextDueAt: checkAt };
        }
        run.steps++;
        run.totals = totalPurged([{ deleted: run.totals }, next.value]);
        for (const [kind, count] of Object.entries(next.value.deleted)) if (count > 0) purged.inc({ kind }, count);
        // Between steps the database is the service's, six times as long as the step held it:
        // the purge takes at most a seventh of the writer (SQLite's one, and this process's
        // event loop) and never a long stretch of it.
        await sleep(Math.max(1, PAUSE_FACTOR * (performance.now() - stepStartedAt)));
      }
      return { handled: 1 };
    },
  };
}
