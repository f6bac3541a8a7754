// webhooks: svc delivering status webhooks to local receivers (their own process, one port per
// receiver). Deliveries come from real message traffic: QUEUED messages (inserted in bulk, or
// sent over HTTP at a steady rate) go through the sandbox, and each makes SENT, DELIVERED and
// READ events, 3 deliveries. Targets:
//   throughput       one project, fast receiver, a backlog: deliveries/s received (until all
//                    arrived or a time limit; what had not arrived by then is "missing")
//   beside-failing   the same, beside a project of the same backlog whose receiver answers 500
//   trickle-alone    one project sending N msg/s over HTTP: latency from occurred_at to receipt
//   trickle-beside-slow   the same, beside ten projects with a backlog and receivers taking 9 s
import { join } from 'node:path';
import { type BenchDatabase, type DatabaseKind, freshDatabase, queueMessages } from '../databases.ts';
import { type Child, cpuMs, sleep, spawnNode, waitUntil } from '../processes.ts';
import type { BenchContext, Ratio, Scenario, Target } from '../scenario.ts';
import { receiverCounts } from '../receiverCounts.ts';
import { call, createSender, messageBody, type Sender, startSvc } from '../svc.ts';

type Arrival = [name: string, arrivedAt: number, webhookId: string, event: string, occurredAt: number];
type Kind = 'fast' | 'slow' | 'failing';

const SLOW_RECEIVERS = 10;
const SLOW_DELAY_MS = 9000;
const TRICKLE_PER_S = 20;
const EVENTS_PER_MESSAGE = 3;

function sizes(context: BenchContext) {
  return context.quick
    ? { backlog: 1000, backlogLimitS: 30, trickleS: 5, slowBacklog: 30 }
    : { backlog: 5000, backlogLimitS: 90, trickleS: 30, slowBacklog: 300 };
}

interface Receivers {
  child: Child;
  control: string;
  urls: { [name: string]: string };
}

async function startReceivers(context: BenchContext, specs: { name: string; kind: Kind; delayMs?: number }[]): Promise<Receivers> {
  const child = spawnNode('receivers', join(context.benchDir, 'receivers.ts'), [JSON.stringify(specs)]);
  const line = await child.waitForLine(/^receivers listening /, 20_000);
  const { control, urls } = JSON.parse(line.slice('receivers listening '.length));
  return { child, control, urls };
}

async function distinctReceived(receivers: Receivers, name: string): Promise<number> {
  return (await receiverCounts(receivers.control))[name] ?? 0;
}

async function records(receivers: Receivers): Promise<Arrival[]> {
  return ((await (await fetch(`${receivers.control}/_stats`, { signal: AbortSignal.timeout(30_000) })).json()) as { records: Arrival[] }).records;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Figures of the deliveries one receiver got: rate, latency from occurred_at, duplicates. */
function receiverFigures(all: Arrival[], name: string, since: number, prefix = ''): Record<string, number> {
  const mine = all.filter((record) => record[0] === name);
  const ids = new Set(mine.map((record) => record[2]));
  const latencies = mine.map((record) => record[1] - record[4]).filter((value) => Number.isFinite(value));
  const last = Math.max(since, ...mine.map((record) => record[1]));
  return {
    [`${prefix}received`]: ids.size,
    [`${prefix}duplicates`]: mine.length - ids.size,
    [`${prefix}perS`]: ids.size / Math.max(0.001, (last - since) / 1000),
    [`${prefix}latencyP50`]: percentile(latencies, 50),
    [`${prefix}latencyP95`]: percentile(latencies, 95),
  };
}

interface Setup {
  database: BenchDatabase;
  receivers: Receivers;
  senders: Map<string, Sender>;
  env: Record<string, string>;
}

/** Receivers, a fresh database and one project per receiver (callbackUrl set), made by an api process that is then stopped. */
async function setUp(context: BenchContext, kind: DatabaseKind, specs: { name: string; kind: Kind; delayMs?: number }[]): Promise<Setup> {
  const receivers = await startReceivers(context, specs);
  const database = await freshDatabase(kind, context.postgresUrl);
  const env = {
    SVC_DATABASE_URL: database.url,
    SVC_ALLOW_PRIVATE_CALLBACKS: 'true',
    SVC_PROVIDER_MAX_MPS: '100000',
    SVC_SANDBOX_DELIVERY_DELAY_MS: '0',
    SVC_SANDBOX_READ_DELAY_MS: '0',
  };
  const api = await startSvc(context.svcDir, env, 'api');
  const senders = new Map<string, Sender>();
  for (const [i, spec] of specs.entries()) {
    senders.set(spec.name, await createSender(api.url!, { callbackUrl: receivers.urls[spec.name], phoneNumberId: `10655${String(i).padStart(5, '0')}`, name: spec.name }));
  }
  await api.child.stop();
  return { database, receivers, senders, env };
}

function backlogTarget(kind: DatabaseKind, besideFailing: boolean): Target {
  return {
    name: `${besideFailing ? 'beside-failing' : 'throughput'}-${kind}`,
    async run(context) {
      const { backlog, backlogLimitS } = sizes(context);
      const specs: { name: string; kind: Kind }[] = [{ name: 'fast', kind: 'fast' }];
      if (besideFailing) specs.push({ name: 'failing', kind: 'failing' });
      const setup = await setUp(context, kind, specs);
      try {
        await queueMessages(
          setup.database,
          specs.map((spec, i) => ({ ...setup.senders.get(spec.name)!, firstRecipient: 20_000_000 + i * backlog, count: backlog })),
        );
        const svc = await startSvc(context.svcDir, setup.env, 'all');
        const readyAt = Date.now();
        const cpuBefore = cpuMs(svc.child.pid) ?? 0;
        const expected = backlog * EVENTS_PER_MESSAGE;
        // Bounded: the rate is what was received by then.
        await waitUntil(async () => (await distinctReceived(setup.receivers, 'fast')) >= expected, backlogLimitS * 1000, 250);
        const got = await records(setup.receivers);
        const figures = receiverFigures(got, 'fast', readyAt);
        figures.svcCpuMsPerDelivery = ((cpuMs(svc.child.pid) ?? 0) - cpuBefore) / Math.max(1, got.length);
        if (besideFailing) figures.failingAttemptsPerS = got.filter((r) => r[0] === 'failing').length / Math.max(0.001, (Date.now() - readyAt) / 1000);
        figures.missing = expected - figures.received!;
        // Made but not delivered yet, or not even made (the events lag behind)? Plain SQL on the
        // deliveries table; left out if its shape is not what this expects.
        const pending = await setup.database
          .query<{ n: number | string }>("select count(*) as n from webhook_deliveries where status = 'pending'")
          .catch(() => undefined);
        if (pending) figures.pendingAtEnd = Number(pending[0]!.n);
        await svc.child.stop();
        return { figures };
      } finally {
        await setup.database.close();
      }
    },
  };
}

function trickleTarget(kind: DatabaseKind, besideSlow: boolean): Target {
  return {
    name: `${besideSlow ? 'trickle-beside-slow' : 'trickle-alone'}-${kind}`,
    async run(context) {
      const { trickleS, slowBacklog } = sizes(context);
      const specs: { name: string; kind: Kind; delayMs?: number }[] = [{ name: 'fast', kind: 'fast' }];
      if (besideSlow) {
        for (let i = 0; i < SLOW_RECEIVERS; i++) specs.push({ name: `slow${i}`, kind: 'slow', delayMs: SLOW_DELAY_MS });
      }
      const setup = await setUp(context, kind, specs);
      try {
        if (besideSlow) {
          await queueMessages(
            setup.database,
            specs.slice(1).map((spec, i) => ({ ...setup.senders.get(spec.name)!, firstRecipient: 20_000_000 + i * slowBacklog, count: slowBacklog })),
          );
        }
        const svc = await startSvc(context.svcDir, setup.env, 'all');
        // Let the slow receivers' backlog take the workers' capacity first.
        await sleep(besideSlow ? 3000 : 0);
        const fast = setup.senders.get('fast')!;
        const startedAt = Date.now();
        const cpuBefore = cpuMs(svc.child.pid) ?? 0;
        const total = TRICKLE_PER_S * trickleS;
        let refused = 0;
        for (let i = 0; i < total; i++) {
          const wait = startedAt + (i * 1000) / TRICKLE_PER_S - Date.now();
          if (wait > 0) await sleep(wait);
          const reply = await call(svc.url!, 'POST', '/v1/messages', { key: fast.key, body: messageBody(i) });
          if (reply.status !== 202) refused++;
        }
        const expected = (total - refused) * EVENTS_PER_MESSAGE;
        // Deliveries still missing 30 s after the last send are counted as missing.
        await waitUntil(async () => (await distinctReceived(setup.receivers, 'fast')) >= expected, 30_000, 250);
        const got = await records(setup.receivers);
        const figures = receiverFigures(got, 'fast', startedAt);
        figures.svcCpuMsPerDelivery = ((cpuMs(svc.child.pid) ?? 0) - cpuBefore) / Math.max(1, got.length);
        figures.missing = expected - figures.received!;
        figures.refused = refused;
        if (besideSlow) figures.slowReceived = got.filter((r) => r[0] !== 'fast').length;
        await svc.child.stop();
        return { figures };
      } finally {
        await setup.database.close();
      }
    },
  };
}

export const webhooks: Scenario = {
  name: 'webhooks',
  title: `webhooks: deliveries to local receivers (fast 204; failing 500; ${SLOW_RECEIVERS} slow ones answering after ${SLOW_DELAY_MS / 1000} s); trickle = ${TRICKLE_PER_S} msg/s over HTTP`,
  figures: [
    { key: 'received', label: 'fast: received', digits: 0 },
    { key: 'missing', label: 'fast: not received by the end', digits: 0 },
    { key: 'duplicates', label: 'fast: duplicates', digits: 0 },
    { key: 'perS', label: 'fast: deliveries/s', digits: 0 },
    { key: 'latencyP50', label: 'fast: p50 ms occurred→received', digits: 0 },
    { key: 'latencyP95', label: 'fast: p95 ms', digits: 0 },
    { key: 'pendingAtEnd', label: 'deliveries pending at the end (all projects)', digits: 0 },
    { key: 'svcCpuMsPerDelivery', label: 'svc CPU ms per request received (all receivers)', digits: 2 },
    { key: 'failingAttemptsPerS', label: 'failing: attempts/s', digits: 0 },
    { key: 'slowReceived', label: 'slow: requests received', digits: 0 },
    { key: 'refused', label: 'non-202 sends', digits: 0 },
  ],
  targets(context) {
    return context.databases.flatMap((kind) => [
      backlogTarget(kind, false),
      backlogTarget(kind, true),
      trickleTarget(kind, false),
      trickleTarget(kind, true),
    ]);
  },
  ratios(context) {
    return context.databases.flatMap((kind): Ratio[] => [
      { label: `beside-failing / throughput (${kind})`, numerator: `beside-failing-${kind}`, denominator: `throughput-${kind}`, figure: 'perS' },
      { label: `trickle beside slow / alone (${kind})`, numerator: `trickle-beside-slow-${kind}`, denominator: `trickle-alone-${kind}`, figure: 'latencyP50' },
      { label: `trickle beside slow / alone (${kind})`, numerator: `trickle-beside-slow-${kind}`, denominator: `trickle-alone-${kind}`, figure: 'latencyP95' },
    ]);
  },
};
