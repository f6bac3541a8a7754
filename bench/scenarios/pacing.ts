// pacing: svc sending through the WhatsApp provider to a fake Graph API with a set latency (and
// hanging calls), each phone number kept busy by a deep queue. Per number: messages/s over a
// steady-state window as a share of the cap, and the busiest calendar second the fake saw
// (which must not exceed the cap). PostgreSQL runs two worker processes; SQLite one process.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DatabaseKind, countWhere, freshDatabase, queueMessages } from '../databases.ts';
import { type Child, sleep, spawnNode } from '../processes.ts';
import { median } from '../report.ts';
import type { BenchContext, Measurement, Scenario, Target } from '../scenario.ts';
import type { Stall } from '../loopStalls.ts';
import { createSender, type Sender, startSvc, type SvcProcess } from '../svc.ts';

interface PacingCase {
  name: string;
  latencyMs: number;
  numbers: number;
  cap: number;
  hangFraction: number;
}

const CASES: PacingCase[] = [
  ...[50, 250, 1000].flatMap((latencyMs) => [
    { name: `l${latencyMs}-n1`, latencyMs, numbers: 1, cap: 80, hangFraction: 0 },
    // 100 numbers at a lower cap: 1,000 sends/s in all.
    { name: `l${latencyMs}-n100-cap10`, latencyMs, numbers: 100, cap: 10, hangFraction: 0 },
  ]),
  { name: 'l50-hang1pct-n1', latencyMs: 50, numbers: 1, cap: 80, hangFraction: 0.01 },
  { name: 'l50-hang1pct-n2', latencyMs: 50, numbers: 2, cap: 80, hangFraction: 0.01 },
];

interface NumberStats {
  arrivals: number[];
  answered: number;
  hung: number;
}

function phoneNumberId(index: number): string {
  return `10655${String(index).padStart(5, '0')}`;
}

async function startFake(context: BenchContext, pacingCase: PacingCase): Promise<{ child: Child; url: string }> {
  const child = spawnNode('fake-graph', join(context.benchDir, 'fakeGraph.ts'), [
    JSON.stringify({ latencyMs: pacingCase.latencyMs, hangFraction: pacingCase.hangFraction }),
  ]);
  const line = await child.waitForLine(/^fake graph listening /, 20_000);
  return { child, url: line.slice('fake graph listening '.length).trim() };
}

/** Arrivals per calendar second (epoch seconds). */
function sendsPerSecond(arrivals: readonly number[]): Map<number, number> {
  const perSecond = new Map<number, number>();
  for (const at of arrivals) perSecond.set(Math.floor(at / 1000), (perSecond.get(Math.floor(at / 1000)) ?? 0) + 1);
  return perSecond;
}

interface Stalls {
  svc: Stall[];
  fake: Stall[];
}

/** Each calendar second over a number's cap, with the event-loop stalls around it in svc and the fake. */
function overCapSeconds(pacingCase: PacingCase, stats: Record<string, NumberStats>, startedAt: number, stalls: Stalls): string[] {
  const notes: string[] = [];
  for (const [id, number] of Object.entries(stats)) {
    for (const [second, count] of sendsPerSecond(number.arrivals)) {
      if (count <= pacingCase.cap) continue;
      const near = (list: Stall[]) =>
        list
          .filter((stall) => stall.at + stall.ms >= second * 1000 - 1000 && stall.at < second * 1000 + 1000)
          .map((stall) => `${stall.at - second * 1000}ms+${stall.ms}`)
          .join(' ') || 'none';
      const late = number.arrivals.filter((at) => Math.floor(at / 1000) === second).map((at) => at % 1000);
      notes.push(
        `number ${id}: ${count} sends in the second at +${second - Math.floor(startedAt / 1000)} s ` +
          `(ms into it: ${late.join(',')}); loop stalls (start relative to that second + length): svc ${near(stalls.svc)}; fake ${near(stalls.fake)}`,
      );
    }
  }
  return notes;
}

function measure(pacingCase: PacingCase, stats: Record<string, NumberStats>, from: number, windowS: number): Measurement {
  const to = from + windowS * 1000;
  const perNumber = Array.from({ length: pacingCase.numbers }, (_, i) => {
    const id = phoneNumberId(i);
    const arrivals = stats[id]?.arrivals ?? [];
    const inWindow = arrivals.filter((at) => at >= from && at < to).length;
    const perSecond = sendsPerSecond(arrivals);
    return {
      id,
      rate: inWindow / windowS,
      busiestSecond: Math.max(0, ...perSecond.values()),
      sends: arrivals.length,
      hung: stats[id]?.hung ?? 0,
    };
  });
  const shares = perNumber.map((number) => number.rate / pacingCase.cap);
  const busiest = Math.max(...perNumber.map((number) => number.busiestSecond));
  return {
    figures: {
      cap: pacingCase.cap,
      shareMedianPct: median(shares) * 100,
      shareMinPct: Math.min(...shares) * 100,
      aggregateMps: perNumber.reduce((sum, number) => sum + number.rate, 0),
      busiestSecond: busiest,
      busiestOverCap: busiest / pacingCase.cap,
      hung: perNumber.reduce((sum, number) => sum + number.hung, 0),
    },
    notes: busiest > pacingCase.cap ? [`a calendar second saw ${busiest} sends to one number (cap ${pacingCase.cap})`] : [],
    detail: { perNumber },
  };
}

function pacingTarget(kind: DatabaseKind, pacingCase: PacingCase): Target {
  return {
    name: `${kind}-${pacingCase.name}`,
    async run(context) {
      const skipS = context.quick ? 2 : 5;
      const database = await freshDatabase(kind, context.postgresUrl);
      const workers: SvcProcess[] = [];
      const stallsDir = mkdtempSync(join(tmpdir(), 'svc-bench-stalls-'));
      try {
        const fake = await startFake(context, pacingCase);
        const env = {
          SVC_DATABASE_URL: database.url,
          SVC_PROVIDER: 'whatsapp',
          SVC_WHATSAPP_GRAPH_URL: fake.url,
          SVC_WHATSAPP_APP_SECRET: 'bench-app-secret',
          SVC_WHATSAPP_VERIFY_TOKEN: 'bench-verify-token',
          SVC_PROVIDER_MAX_MPS: String(pacingCase.cap),
        };
        // Setup over HTTP with an api process (no workers), gone before the measurement.
        const api = await startSvc(context.svcDir, env, 'api');
        const senders: Sender[] = [];
        for (let i = 0; i < pacingCase.numbers; i++) {
          senders.push(await createSender(api.url!, { phoneNumberId: phoneNumberId(i), sandbox: false, name: `Bench ${i}` }));
        }
        await api.child.stop();
        // The fake approves templates when they are submitted; settle them here too, so the run
        // does not wait for the review worker.
        await database.query("update templates set status = 'APPROVED'");
        // Enough to keep every number at its cap through the warm-up, the window and a margin.
        const perNumber = Math.ceil(pacingCase.cap * (skipS + context.windowS + 10) * 1.2);
        await queueMessages(
          database,
          senders.map((sender, i) => ({ ...sender, firstRecipient: 20_000_000 + i * perNumber, count: perNumber })),
        );
        const roles = kind === 'postgres' ? (['worker', 'worker'] as const) : (['all'] as const);
        for (const [i, role] of roles.entries()) {
          workers.push(
            await startSvc(context.svcDir, { ...env, BENCH_LOOP_STALLS_FILE: join(stallsDir, `svc-${i}`) }, role, {
              nodeOptions: `--import ${join(context.benchDir, 'loopStalls.ts')}`,
            }),
          );
        }
        const startedAt = Date.now();
        await sleep((skipS + context.windowS) * 1000 + 500);
        const stats = (await (await fetch(`${fake.url}/_stats`, { signal: AbortSignal.timeout(30_000) })).json()) as { numbers: Record<string, NumberStats>; stalls: Stall[] };
        const measured = measure(pacingCase, stats.numbers, startedAt + skipS * 1000, context.windowS);
        const svcStalls = roles.flatMap((_, i) => readStalls(join(stallsDir, `svc-${i}`)));
        // Stalls while sending (module loading at start stalls every process for about a second).
        const sending = (list: Stall[]) => list.filter((stall) => stall.at >= startedAt);
        measured.figures.svcMaxStallMs = Math.max(0, ...sending(svcStalls).map((stall) => stall.ms));
        measured.figures.svcStalls50 = sending(svcStalls).length;
        measured.figures.svcStalls100 = sending(svcStalls).filter((stall) => stall.ms >= 100).length;
        measured.figures.fakeMaxStallMs = Math.max(0, ...sending(stats.stalls).map((stall) => stall.ms));
        // The fake does nothing but answer: its stalls are the machine's (CPU starvation), the floor under svc's.
        measured.figures.fakeStalls50 = sending(stats.stalls).length;
        const long = sending(svcStalls).filter((stall) => stall.ms >= 100);
        if (long.length > 0) {
          measured.notes!.push(`svc loop stalls ≥ 100 ms (s after start + ms): ${long.map((stall) => `${((stall.at - startedAt) / 1000).toFixed(1)}+${stall.ms}`).join(' ')}`);
        }
        measured.notes!.push(...overCapSeconds(pacingCase, stats.numbers, startedAt, { svc: svcStalls, fake: stats.stalls }));
        const queued = await countWhere(database, 'messages', "status = 'QUEUED'");
        if (queued === 0) measured.notes!.push('the queue ran dry before the end of the window');
        const failed = await countWhere(database, 'messages', "status = 'FAILED'");
        measured.figures.failed = failed;
        return measured;
      } finally {
        await Promise.all(workers.map((worker) => worker.child.stop()));
        await database.close();
        rmSync(stallsDir, { recursive: true, force: true });
      }
    },
  };
}

function readStalls(file: string): Stall[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return []; // no stall at all
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [at, ms] = line.split(' ').map(Number);
      return { at: at!, ms: ms! };
    });
}

export const pacing: Scenario = {
  name: 'pacing',
  title: 'pacing: WhatsApp provider against a fake Graph API (latency, hanging calls); per number, sends/s in the steady-state window as a share of the cap',
  figures: [
    { key: 'cap', label: 'cap/s per number', digits: 0 },
    { key: 'shareMedianPct', label: 'median share of cap %', digits: 1 },
    { key: 'shareMinPct', label: 'min share of cap %', digits: 1 },
    { key: 'aggregateMps', label: 'all numbers sends/s', digits: 0 },
    { key: 'busiestSecond', label: 'busiest second (one number)', digits: 0 },
    { key: 'busiestOverCap', label: 'busiest / cap', digits: 2 },
    { key: 'hung', label: 'hung calls', digits: 0 },
    { key: 'svcMaxStallMs', label: 'svc longest loop stall ms', digits: 0 },
    { key: 'svcStalls50', label: 'svc stalls ≥ 50 ms', digits: 0 },
    { key: 'svcStalls100', label: 'svc stalls ≥ 100 ms', digits: 0 },
    { key: 'fakeMaxStallMs', label: 'fake longest loop stall ms', digits: 0 },
    { key: 'fakeStalls50', label: 'fake stalls ≥ 50 ms', digits: 0 },
    { key: 'failed', label: 'FAILED msgs', digits: 0 },
  ],
  targets(context) {
    return context.databases.flatMap((kind) => CASES.map((pacingCase) => pacingTarget(kind, pacingCase)));
  },
  ratios: () => [],
};
