// accept: POST /v1/messages at c=64 for a fixed time, svc (whole service, its own process)
// beside anchors that do less and less of its work: bare Fastify with the same 202 body, one
// SQLite insert per request (with and without a minimal group commit), one PostgreSQL insert.
import { join } from 'node:path';
import { type BenchDatabase, countWhere, type DatabaseKind, freshDatabase } from '../databases.ts';
import { type LoadFigures, runLoad } from '../load.ts';
import { type Child, rssKiB, sleep, spawnNode, waitUntil } from '../processes.ts';
import type { BenchContext, Measurement, Ratio, Scenario, Target } from '../scenario.ts';
import { call, createSender, messageBody, startSvc } from '../svc.ts';

const CONNECTIONS = 64;

function durations(context: BenchContext) {
  return context.quick ? { warmupS: 0, durationS: 3, idleMs: 500 } : { warmupS: 2, durationS: 10, idleMs: 2000 };
}

/** svc's own 202 body, captured by the first svc run and answered by the anchors. */
let svcReply: string | undefined;

function figuresOf(load: LoadFigures, extra: { rows?: number; idleRssKiB?: number }): Measurement {
  const { result } = load;
  const answered = Math.max(1, result.answered);
  const figures: Record<string, number> = {
    reqPerS: result.ok2xx / result.durationS,
    p50: result.latencyP50,
    p99: result.latencyP99,
    non2xx: result.non2xx + result.errors + result.timeouts,
    cpuMsPerReq: load.serverCpuMs / answered,
    loadgenCpuPct: (load.loadgenCpuMs / (result.durationS * 1000)) * 100,
  };
  if (load.pgBackendCpuMs !== undefined) figures.pgBackendCpuMsPerReq = load.pgBackendCpuMs / answered;
  if (load.pgAllCpuMs !== undefined) figures.pgAllCpuMsPerReq = load.pgAllCpuMs / answered;
  if (extra.rows !== undefined) figures.rowsMinus2xx = extra.rows - result.ok2xx;
  if (extra.idleRssKiB !== undefined) figures.idleRssMiB = extra.idleRssKiB / 1024;
  const notes = Object.keys(result.statuses).some((code) => !code.startsWith('2'))
    ? [`statuses: ${JSON.stringify(result.statuses)}`]
    : [];
  return { figures, notes, detail: { load } };
}

/**
 * The row count once it stops moving: requests cut off at the end of a load (autocannon does not
 * wait for their answers) may still commit after it.
 */
async function settledCount(countRows: () => Promise<number>): Promise<number> {
  let last = -1;
  await waitUntil(async () => {
    const now = await countRows();
    const settled = now === last;
    last = now;
    return settled;
  }, 10_000, 500);
  return last;
}

async function loadAgainst(
  context: BenchContext,
  url: string,
  pid: number,
  options: { key?: string; database?: BenchDatabase; countRows?: () => Promise<number> },
): Promise<Measurement> {
  const { warmupS, durationS, idleMs } = durations(context);
  await sleep(idleMs);
  const idleRssKiB = rssKiB(pid);
  if (warmupS > 0) await runLoad(context.benchDir, { url, connections: CONNECTIONS, durationS: warmupS, key: options.key, firstIndex: 1_000_000 }, [pid]);
  const rowsBefore = options.countRows ? await settledCount(options.countRows) : 0;
  const load = await runLoad(context.benchDir, { url, connections: CONNECTIONS, durationS, key: options.key }, [pid], options.database);
  const rows = options.countRows ? (await settledCount(options.countRows)) - rowsBefore : undefined;
  return figuresOf(load, { rows, idleRssKiB });
}

/**
 * svc as a whole (role all: the API and the workers dispatching every accepted message to the
 * sandbox), or the API alone (role api: the request path without the workers beside it).
 */
function svcTarget(kind: DatabaseKind, role: 'all' | 'api'): Target {
  return {
    name: role === 'all' ? `svc-${kind}` : `svc-${kind}-api`,
    async run(context) {
      const database = await freshDatabase(kind, context.postgresUrl);
      try {
        const svc = await startSvc(context.svcDir, {
          SVC_DATABASE_URL: database.url,
          SVC_PROVIDER_MAX_MPS: '100000',
          SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000',
          // One key sends everything: its token bucket (SVC_API_RATE_LIMIT, 6000/min by default)
          // would answer most of the load 429, and 429s are not what this scenario measures.
          SVC_API_RATE_LIMIT: '10000000',
        }, role);
        const sender = await createSender(svc.url!);
        const first = await call(svc.url!, 'POST', '/v1/messages', { key: sender.key, body: messageBody(99_999_999 - 30_000_000) });
        if (first.status !== 202) throw new Error(`first send: ${first.status} ${first.text}`);
        svcReply ??= first.text;
        const measured = await loadAgainst(context, `${svc.url}/v1/messages`, svc.child.pid, {
          key: sender.key,
          database,
          countRows: () => countWhere(database, 'messages'),
        });
        await svc.child.stop();
        return measured;
      } finally {
        await database.close();
      }
    },
  };
}

async function startAnchor(context: BenchContext, name: string, script: string, args: string[]): Promise<{ child: Child; url: string }> {
  const child = spawnNode(name, join(context.benchDir, 'anchors', script), args, { env: { ANCHOR_REPLY: svcReply ?? '' } });
  const line = await child.waitForLine(/^anchor listening /, 20_000);
  return { child, url: line.slice('anchor listening '.length).trim() };
}

function anchorTarget(
  name: string,
  kind: DatabaseKind | undefined,
  script: string,
  args: (database: BenchDatabase | undefined) => string[],
): Target {
  return {
    name,
    async run(context) {
      const database = kind ? await freshDatabase(kind, context.postgresUrl) : undefined;
      try {
        const anchor = await startAnchor(context, name, script, args(database));
        const measured = await loadAgainst(context, `${anchor.url}/v1/messages`, anchor.child.pid, {
          database,
          countRows: database ? () => countWhere(database, 'messages') : undefined,
        });
        await anchor.child.stop();
        return measured;
      } finally {
        await database?.close();
      }
    },
  };
}

export const accept: Scenario = {
  name: 'accept',
  title: `accept: POST /v1/messages, autocannon c=${CONNECTIONS} in its own process`,
  figures: [
    { key: 'reqPerS', label: '2xx/s', digits: 0 },
    { key: 'p50', label: 'p50 ms', digits: 1 },
    { key: 'p99', label: 'p99 ms', digits: 1 },
    { key: 'non2xx', label: 'non-2xx+errors', digits: 0 },
    { key: 'cpuMsPerReq', label: 'server CPU ms/req', digits: 3 },
    { key: 'pgBackendCpuMsPerReq', label: 'pg backends CPU ms/req', digits: 3 },
    { key: 'pgAllCpuMsPerReq', label: 'all postgres CPU ms/req', digits: 3 },
    { key: 'rowsMinus2xx', label: 'rows − 2xx', digits: 0 },
    { key: 'idleRssMiB', label: 'idle RSS MiB', digits: 1 },
    { key: 'loadgenCpuPct', label: 'loadgen CPU %', digits: 0 },
  ],
  targets(context) {
    const targets: Target[] = context.databases.flatMap((kind) => [svcTarget(kind, 'all'), svcTarget(kind, 'api')]);
    targets.push(anchorTarget('bare-fastify', undefined, 'bareFastify.ts', () => []));
    targets.push(anchorTarget('sqlite-insert', 'sqlite', 'sqliteInsert.ts', (db) => [db!.place]));
    targets.push(anchorTarget('sqlite-group-commit', 'sqlite', 'sqliteInsert.ts', (db) => [db!.place, '--group-commit']));
    if (context.databases.includes('postgres')) targets.push(anchorTarget('pg-insert', 'postgres', 'pgInsert.ts', (db) => [db!.url]));
    return targets;
  },
  ratios(context) {
    const pairs: [string, string][] = [
      ['svc-sqlite', 'bare-fastify'],
      ['svc-sqlite', 'sqlite-insert'],
      ['svc-sqlite', 'sqlite-group-commit'],
      ['svc-sqlite-api', 'sqlite-group-commit'],
    ];
    if (context.databases.includes('postgres')) {
      pairs.push(['svc-postgres', 'bare-fastify'], ['svc-postgres', 'pg-insert'], ['svc-postgres-api', 'pg-insert']);
    }
    const ratios: Ratio[] = [];
    for (const [numerator, denominator] of pairs) {
      const pgFigures = denominator === 'pg-insert' ? ['pgAllCpuMsPerReq'] : [];
      for (const figure of ['reqPerS', 'p99', 'cpuMsPerReq', ...pgFigures]) {
        ratios.push({ label: `${numerator} / ${denominator}`, numerator, denominator, figure });
      }
    }
    ratios.push({ label: 'svc-sqlite / bare-fastify', numerator: 'svc-sqlite', denominator: 'bare-fastify', figure: 'idleRssMiB' });
    return ratios;
  },
};
