// dispatch-throughput: how fast one svc worker process drains a queue of QUEUED messages with
// pacing out of the way (sandbox provider, cap 100,000/s, delivery reports an hour away), against
// graphile-worker draining as many no-op jobs from the same PostgreSQL.
import { join } from 'node:path';
import { queueGraphileJobs } from '../anchors/graphileWorker.ts';
import { type BenchDatabase, countWhere, type DatabaseKind, freshDatabase, queueMessages } from '../databases.ts';
import { cpuByName, cpuMs, cpuSpent, spawnNode, waitUntil } from '../processes.ts';
import type { BenchContext, Measurement, Scenario, Target } from '../scenario.ts';
import { createSender, startSvc } from '../svc.ts';

const DRAIN_TIMEOUT_MS = 300_000;

const jobsOf = (context: BenchContext) => (context.quick ? 2000 : 20_000);

/** Polls `remaining` until 0; returns the figures of the drain measured from `readyAt`. */
async function measureDrain(
  count: number,
  spawnedAt: number,
  readyAt: number,
  pid: number,
  pg: BenchDatabase | undefined,
  remaining: () => Promise<number>,
  cpuBefore: number,
  pgBefore: Map<number, number> | undefined,
): Promise<Measurement> {
  let left = count;
  const drained = await waitUntil(async () => (left = await remaining()) === 0, DRAIN_TIMEOUT_MS, 50);
  const emptyAt = Date.now();
  if (!drained) throw new Error(`${left} of ${count} still queued after ${DRAIN_TIMEOUT_MS / 1000} s`);
  const workerCpu = (cpuMs(pid) ?? 0) - cpuBefore;
  const figures: Record<string, number> = {
    perS: count / ((emptyAt - readyAt) / 1000),
    perSFromSpawn: count / ((emptyAt - spawnedAt) / 1000),
    drainS: (emptyAt - readyAt) / 1000,
    workerCpuMsPerItem: workerCpu / count,
  };
  if (pg && pgBefore) {
    const rows = await pg.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [pg.applicationName]);
    const after = cpuByName('postgres');
    figures.pgBackendCpuMsPerItem = cpuSpent(pgBefore, after, rows.map((row) => row.pid)) / count;
  }
  return { figures };
}

function svcTarget(kind: DatabaseKind): Target {
  return {
    name: `svc-${kind}`,
    async run(context) {
      const count = jobsOf(context);
      const database = await freshDatabase(kind, context.postgresUrl);
      const env = {
        SVC_DATABASE_URL: database.url,
        SVC_PROVIDER_MAX_MPS: '100000',
        SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000',
      };
      try {
        // An api process for the setup; it runs no workers and is gone before the drain.
        const api = await startSvc(context.svcDir, env, 'api');
        const sender = await createSender(api.url!);
        await api.child.stop();
        await queueMessages(database, [{ ...sender, firstRecipient: 20_000_000, count }]);
        const pgBefore = kind === 'postgres' ? cpuByName('postgres') : undefined;
        const spawnedAt = Date.now();
        const worker = await startSvc(context.svcDir, env, 'worker');
        const readyAt = Date.now();
        const measured = await measureDrain(count, spawnedAt, readyAt, worker.child.pid, kind === 'postgres' ? database : undefined,
          () => countWhere(database, 'messages', "status = 'QUEUED'"), 0, pgBefore);
        const sent = await countWhere(database, 'messages', "status = 'SENT'");
        if (sent !== count) measured.notes = [`${sent} of ${count} SENT after the drain`];
        await worker.child.stop();
        return measured;
      } finally {
        await database.close();
      }
    },
  };
}

const graphileWorker: Target = {
  name: 'graphile-worker',
  async run(context) {
    const count = jobsOf(context);
    // Its own fresh schema, made by its migrations, named after the target's (for the cleanup).
    const database = await freshDatabase('postgres', context.postgresUrl);
    const schema = `${database.place}_gw`;
    try {
      await queueGraphileJobs(database.url, schema, count);
      const pgBefore = cpuByName('postgres');
      const spawnedAt = Date.now();
      const worker = spawnNode('graphile-worker', join(context.benchDir, 'anchors', 'graphileWorker.ts'), [database.url, schema]);
      await worker.waitForLine(/^worker ready/, 30_000);
      const readyAt = Date.now();
      const measured = await measureDrain(count, spawnedAt, readyAt, worker.pid, database,
        () => countWhere(database, `${schema}._private_jobs`), 0, pgBefore);
      await worker.stop();
      return measured;
    } finally {
      await database.close();
    }
  },
};

export const dispatchThroughput: Scenario = {
  name: 'dispatch-throughput',
  title: 'dispatch-throughput: one worker process drains a queue (svc: 20,000 QUEUED messages — 2,000 in quick mode —, sandbox, no pacing; graphile-worker: as many no-op jobs, default settings)',
  figures: [
    { key: 'perS', label: 'items/s (ready → empty)', digits: 0 },
    { key: 'perSFromSpawn', label: 'items/s (spawn → empty)', digits: 0 },
    { key: 'drainS', label: 'drain s', digits: 2 },
    { key: 'workerCpuMsPerItem', label: 'worker CPU ms/item', digits: 3 },
    { key: 'pgBackendCpuMsPerItem', label: 'pg backends CPU ms/item', digits: 3 },
  ],
  targets(context) {
    const targets = context.databases.map(svcTarget);
    if (context.databases.includes('postgres')) targets.push(graphileWorker);
    return targets;
  },
  ratios(context) {
    if (!context.databases.includes('postgres')) return [];
    return ['svc-postgres', 'svc-sqlite'].flatMap((numerator) =>
      ['perS', 'workerCpuMsPerItem'].map((figure) => ({ label: `${numerator} / graphile-worker`, numerator, denominator: 'graphile-worker', figure })),
    );
  },
};
