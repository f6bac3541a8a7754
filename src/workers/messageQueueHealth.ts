import { Gauge, type Registry } from 'prom-client';
import { queueDepth, queuedProjects } from '../db/claims.ts';
import type { Db } from '../db/database.ts';
import { lastWorkerHeartbeat } from '../db/workerHeartbeats.ts';
import { sampled } from './sampled.ts';

/** When the oldest message that is due and not claimed fell due (one seek per project with work). */
export async function oldestUnclaimedDueAt(db: Db, now: number): Promise<number | undefined> {
  let oldest: number | undefined;
  for (const project of await queuedProjects(db, 'messages')) {
    if (project.nextDueAt <= now && (oldest === undefined || project.nextDueAt < oldest)) oldest = project.nextDueAt;
  }
  return oldest;
}

/**
 * Why no worker seems to be sending, or undefined when all is well: due messages have waited
 * longer than `stallMs` and no worker has looked for work in that time. A long backlog that
 * workers are pacing through is not a stall: they keep looking.
 */
export async function dispatchStall(db: Db, now: number, stallMs: number): Promise<string | undefined> {
  const oldest = await oldestUnclaimedDueAt(db, now);
  if (oldest === undefined || now - oldest <= stallMs) return undefined;
  const last = await lastWorkerHeartbeat(db);
  if (last !== undefined && now - last <= stallMs) return undefined;
  const since = last === undefined ? 'ever' : `for ${Math.round((now - last) / 1000)} s`;
  return `No worker has claimed due messages ${since}; the oldest has waited ${Math.round((now - oldest) / 1000)} s. Start or check the worker processes.`;
}

/**
 * The message queue's gauges. A scrape never scans: the figures are sampled at most every 10 s
 * (a count over the queued rows' partial index, and one seek per project with work).
 */
export function registerMessageQueueMetrics(registry: Registry, db: Db): void {
  const current = sampled(async () => {
    return { depth: await queueDepth(db, 'messages'), oldestDueAt: await oldestUnclaimedDueAt(db, Date.now()) };
  });
  new Gauge({
    name: 'svc_messages_queued',
    help: 'Messages QUEUED for submission (waiting for their pace, in flight, or waiting to be retried); sampled every 10 s.',
    registers: [registry],
    async collect() {
      const figures = await current().catch(() => undefined);
      if (figures) this.set(figures.depth);
    },
  });
  new Gauge({
    name: 'svc_messages_oldest_due_age_seconds',
    help: 'How long the oldest due, unclaimed message has waited (0 when none); sampled every 10 s.',
    registers: [registry],
    async collect() {
      const figures = await current().catch(() => undefined);
      if (figures) this.set(figures.oldestDueAt === undefined ? 0 : Math.max(0, Date.now() - figures.oldestDueAt) / 1000);
    },
  });
}
