// reads: GET /v1/messages/{id} and a list page (GET /v1/messages?limit=50) at c=64, svc (whole
// service, its own process) beside bare Fastify answering the very same JSON bytes (issue #11:
// reads at ≥ 0.5 × bare Fastify).
import { join } from 'node:path';
import { type DatabaseKind, freshDatabase } from '../databases.ts';
import { cpuMs, rssKiB, sleep, spawnNode, startBareJson } from '../processes.ts';
import type { LoadResult } from '../load.ts';
import type { BenchContext, Measurement, Ratio, Scenario, Target } from '../scenario.ts';
import { call, createSender, messageBody, startSvc } from '../svc.ts';

const CONNECTIONS = 64;
const MESSAGES = 60;
type Read = 'get' | 'list';
const PATHS: Record<Read, (id: string) => string> = { get: (id) => `/v1/messages/${id}`, list: () => '/v1/messages?limit=50' };

/** The bodies svc answered, captured by the first svc run and served by the anchor. */
let captured: Record<string, string> | undefined;

function durations(context: BenchContext) {
  return context.quick ? { warmupS: 1, durationS: 3 } : { warmupS: 2, durationS: 10 };
}

async function load(context: BenchContext, url: string, pid: number, key: string | undefined, durationS: number) {
  const before = cpuMs(pid) ?? 0;
  const loadgen = spawnNode('get-loadgen', join(context.benchDir, 'getLoadgen.ts'), [JSON.stringify({ url, connections: CONNECTIONS, durationS, key })]);
  try {
    const line = await loadgen.waitForLine(/^RESULT /, (durationS + 60) * 1000);
    const serverCpuMs = (cpuMs(pid) ?? 0) - before;
    return { result: JSON.parse(line.slice('RESULT '.length)) as LoadResult, serverCpuMs };
  } finally {
    await loadgen.stop();
  }
}

async function measure(context: BenchContext, url: string, pid: number, key: string | undefined): Promise<Measurement> {
  const { warmupS, durationS } = durations(context);
  await sleep(1000);
  const idleRssKiB = rssKiB(pid) ?? 0;
  await load(context, url, pid, key, warmupS);
  const { result, serverCpuMs } = await load(context, url, pid, key, durationS);
  const notes = Object.keys(result.statuses).some((code) => !code.startsWith('2')) ? [`statuses: ${JSON.stringify(result.statuses)}`] : [];
  return {
    figures: {
      reqPerS: result.ok2xx / result.durationS,
      p50: result.latencyP50,
      p99: result.latencyP99,
      non2xx: result.non2xx + result.errors + result.timeouts,
      cpuMsPerReq: serverCpuMs / Math.max(1, result.answered),
      idleRssMiB: idleRssKiB / 1024,
    },
    notes,
  };
}

function svcTarget(kind: DatabaseKind, read: Read): Target {
  return {
    name: `svc-${kind}-${read}`,
    async run(context) {
      const database = await freshDatabase(kind, context.postgresUrl);
      try {
        const svc = await startSvc(context.svcDir, {
          SVC_DATABASE_URL: database.url,
          SVC_PROVIDER_MAX_MPS: '100000',
          SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000',
          SVC_API_RATE_LIMIT: '10000000',
        });
        const sender = await createSender(svc.url!);
        let lastId = '';
        for (let i = 0; i < MESSAGES; i++) {
          const sent = await call(svc.url!, 'POST', '/v1/messages', { key: sender.key, body: messageBody(i) });
          if (sent.status !== 202) throw new Error(`send: ${sent.status} ${sent.text}`);
          lastId = sent.body.id;
        }
        // Let the sends settle (SENT), so the bodies do not change during the load.
        await sleep(1500);
        const path = PATHS[read](lastId);
        const reply = await call(svc.url!, 'GET', path, { key: sender.key });
        if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.text}`);
        captured ??= {};
        captured[`/${read}`] ??= reply.text;
        const measured = await measure(context, svc.url! + path, svc.child.pid, sender.key);
        await svc.child.stop();
        return measured;
      } finally {
        await database.close();
      }
    },
  };
}

function anchorTarget(read: Read): Target {
  return {
    name: `bare-fastify-${read}`,
    async run(context) {
      const bodies = captured ?? {};
      if (!bodies[`/${read}`]) throw new Error('no svc body captured yet (run an svc target first)');
      const anchor = await startBareJson(context.benchDir, { [`/${read}`]: bodies[`/${read}`]! });
      const measured = await measure(context, `${anchor.url}/${read}`, anchor.pid, undefined);
      await anchor.stop();
      return measured;
    },
  };
}

export const reads: Scenario = {
  name: 'reads',
  title: `reads: GET /v1/messages/{id} and GET /v1/messages?limit=50, autocannon c=${CONNECTIONS} in its own process`,
  figures: [
    { key: 'reqPerS', label: '2xx/s', digits: 0 },
    { key: 'p50', label: 'p50 ms', digits: 1 },
    { key: 'p99', label: 'p99 ms', digits: 1 },
    { key: 'non2xx', label: 'non-2xx+errors', digits: 0 },
    { key: 'cpuMsPerReq', label: 'server CPU ms/req', digits: 3 },
    { key: 'idleRssMiB', label: 'idle RSS MiB', digits: 1 },
  ],
  targets(context) {
    const targets: Target[] = [];
    for (const read of ['get', 'list'] as const) {
      for (const kind of context.databases) targets.push(svcTarget(kind, read));
      targets.push(anchorTarget(read));
    }
    return targets;
  },
  ratios(context) {
    const ratios: Ratio[] = [];
    for (const read of ['get', 'list'] as const) {
      for (const kind of context.databases) {
        for (const figure of ['reqPerS', 'p99', 'cpuMsPerReq']) {
          ratios.push({ label: `svc-${kind}-${read} / bare-fastify-${read}`, numerator: `svc-${kind}-${read}`, denominator: `bare-fastify-${read}`, figure });
        }
      }
    }
    return ratios;
  },
};
