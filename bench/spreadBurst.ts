// The scale scenario's "burst spread over every project" (issue 19) on a SQLite database of any size,
// without growing it through the API for an hour:
//
//   seed:  projects made through svc's API (keys, credentials, an approved template), then N messages
//          that reached READ with their events, deliveries and attempts written in bulk by the plan
//          tests' seeder (test/support/bulkSeed.ts), their times spread over the last `--span-s`
//          seconds (so no retention purges them). The senders (keys) go beside the file, FILE.senders.json.
//   burst: for each run and each svc checkout in turn (interleaved A/B): a copy of the seeded file,
//          the projects' callback URLs pointed at ten fresh receivers, svc (`serve --role all`, the
//          scale scenario's settings) started on it, a warm-up of `--warmup` sends (by default one per
//          project, at least 300: the scenario's svc has served every project in its growth step before
//          its burst, so its per-project caches — keys, send contexts, opened secrets — are warm), then the burst:
//          `--burst` sends, one project after another, 64 in flight, until 3 × burst webhooks arrived.
//          Per burst: webhooks/s (first send to last webhook, as the scenario), and svc's CPU ms and
//          I/O (/proc/PID/io) over the burst, per message; the load average.
//
//   node bench/spreadBurst.ts seed --out /tmp/x.db --messages 300000 --projects 3000 [--svc-dir DIR] [--span-s 3600]
//   node bench/spreadBurst.ts burst --db /tmp/x.db [--db /tmp/y.db] --svc main=DIR --svc branch=DIR [--runs 3] [--burst 3000] [--warmup N]
//     [--trace: WAL frames and statement times (bench/walFrames.ts)] [--stalls: event-loop stalls ≥ 50 ms (bench/loopStalls.ts)]
//     (BENCH_SVC_NODE_OPTIONS applies to every svc, e.g. --cpu-prof)
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuMs, io, type Io, rssKiB, spawnNode, stopAll, waitUntil } from './processes.ts';
import { receivedTotal } from './receiverCounts.ts';
import { call, createSender, messageBody, type Sender, startSvc } from './svc.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const RECEIVERS = 10;
const EVENTS_PER_MESSAGE = 3;
const CONNECTIONS = 64;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    out: { type: 'string' },
    db: { type: 'string', multiple: true },
    messages: { type: 'string', default: '3000' },
    projects: { type: 'string', default: '30' },
    'span-s': { type: 'string', default: '3600' },
    'svc-dir': { type: 'string', default: resolve(benchDir, '..') },
    svc: { type: 'string', multiple: true },
    runs: { type: 'string', default: '3' },
    burst: { type: 'string', default: '3000' },
    warmup: { type: 'string' },
    'limit-s': { type: 'string', default: '600' },
    /** Load bench/walFrames.ts into svc: WAL frames by transaction and statement time, over the burst. */
    trace: { type: 'boolean', default: false },
    /** Load bench/loopStalls.ts into svc: its event loop's stalls (≥ 50 ms) over the burst. */
    stalls: { type: 'boolean', default: false },
  },
});

const SVC_ENV = {
  SVC_ALLOW_PRIVATE_CALLBACKS: 'true',
  SVC_PROVIDER_MAX_MPS: '100000',
  SVC_SANDBOX_DELIVERY_DELAY_MS: '0',
  SVC_SANDBOX_READ_DELAY_MS: '0',
  SVC_API_RATE_LIMIT: '10000000',
};

async function pool(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

async function seed(): Promise<void> {
  const out = resolve(values.out ?? '');
  if (!values.out || existsSync(out)) throw new Error(`--out: a file that does not exist yet (${out})`);
  const messages = Number(values.messages);
  const projects = Number(values.projects);
  const svcDir = resolve(values['svc-dir']!);
  const began = Date.now();
  const svc = await startSvc(svcDir, { ...SVC_ENV, SVC_DATABASE_URL: `sqlite:${out}` }, 'api');
  const senders: Sender[] = [];
  try {
    for (let start = 0; start < projects; start += 32) {
      senders.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(32, projects - start) }, (_, i) =>
            // A placeholder callback URL: the burst points every project at its receivers.
            createSender(svc.url!, { phoneNumberId: String(5_000_000_000 + start + i), name: `spread ${start + i}`, callbackUrl: 'http://127.0.0.1:9/hook' }),
          ),
        )),
      );
    }
  } finally {
    await svc.child.stop();
  }
  const projectsS = (Date.now() - began) / 1000;
  // This checkout's seeder and database code, on the schema the given svc made.
  const [{ openDatabase }, { seedBulk }] = await Promise.all([import('../src/db/database.ts'), import('../test/support/bulkSeed.ts')]);
  const database = openDatabase(`sqlite:${out}`, { poolSize: 1 });
  const spanMs = Number(values['span-s']) * 1000;
  const spacingMs = Math.max(1, Math.floor(spanMs / messages));
  const seedFrom = Date.now();
  try {
    await seedBulk(database, {
      projects,
      messages,
      oldTenantMessages: Math.ceil(messages / projects),
      projectIds: senders.map((sender) => sender.projectId),
      startAt: Date.now() - 60_000 - messages * spacingMs,
      spacingMs,
    });
  } finally {
    await database.close();
  }
  const raw = new DatabaseSync(out);
  raw.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  raw.close();
  writeFileSync(`${out}.senders.json`, JSON.stringify(senders));
  console.log(
    `seeded ${out}: ${projects} projects through the API in ${projectsS.toFixed(0)} s, ${messages} messages in bulk in ${((Date.now() - seedFrom) / 1000).toFixed(0)} s`,
  );
}

interface BurstResult {
  name: string;
  run: number;
  perS: number;
  seconds: number;
  acceptS: number;
  cpuMs: number;
  io: Io;
  load: [number, number];
  /** svc's resident set after the burst, MiB. */
  rssMiB: number;
  /** With --stalls: svc's event-loop stalls of 50 ms or more during the burst. */
  stalls?: { count: number; ms: number; maxMs: number };
}

/** The stalls bench/loopStalls.ts recorded ("<start epoch ms> <duration ms>" lines) that began within [from, to]. */
function stallsWithin(file: string, from: number, to: number): { count: number; ms: number; maxMs: number } {
  const lines = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
  const stalls = lines.map((line) => line.split(' ').map(Number) as [number, number]).filter(([at]) => at >= from && at <= to);
  return { count: stalls.length, ms: stalls.reduce((sum, [, ms]) => sum + ms, 0), maxMs: Math.max(0, ...stalls.map(([, ms]) => ms)) };
}

async function burstOnce(name: string, svcDir: string, run: number, db: string, senders: Sender[], receivers: { control: string; urls: Record<string, string> }): Promise<BurstResult> {
  const folder = mkdtempSync(join(tmpdir(), 'hspread-burst-'));
  const copy = join(folder, 'burst.db');
  try {
    copyFileSync(db, copy);
    const raw = new DatabaseSync(copy);
    const update = raw.prepare('update projects set callback_url = ? where id = ?');
    raw.exec('begin');
    senders.forEach((sender, i) => update.run(receivers.urls[`r${i % RECEIVERS}`]!, sender.projectId));
    raw.exec('commit');
    raw.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    raw.close();
    const stallsFile = join(folder, 'stalls.txt');
    const imports = [values.trace && 'walFrames.ts', values.stalls && 'loopStalls.ts'].filter(Boolean).map((file) => `--import ${join(benchDir, file as string)}`);
    const svc = await startSvc(
      svcDir,
      {
        ...SVC_ENV,
        SVC_DATABASE_URL: `sqlite:${copy}`,
        ...(values.trace && { BENCH_WAL_TRACE_DIR: folder }),
        ...(values.stalls && { BENCH_LOOP_STALLS_FILE: stallsFile }),
      },
      'all',
      imports.length > 0 ? { nodeOptions: imports.join(' ') } : {},
    );
    const url = svc.url!;
    const pid = svc.child.pid;
    let recipient = 0;
    const send = async (sender: Sender) => {
      const reply = await call(url, 'POST', '/v1/messages', { key: sender.key, body: messageBody(recipient++), timeoutMs: 300_000 });
      if (reply.status !== 202) throw new Error(`send: ${reply.status} ${reply.text.slice(0, 300)}`);
    };
    const limitMs = Number(values['limit-s']) * 1000;
    /** Sends `count` (project after project, from `offset`), 64 in flight; seconds from the first send to the last webhook. */
    const sendAndSettle = async (count: number, offset: number) => {
      const before = await receivedTotal(receivers.control);
      const from = Date.now();
      await pool(count, CONNECTIONS, (i) => send(senders[(offset + i) % senders.length]!));
      const acceptS = (Date.now() - from) / 1000;
      let seen = before;
      let last = from;
      const ok = await waitUntil(async () => {
        const now = await receivedTotal(receivers.control);
        if (now > seen) [seen, last] = [now, Date.now()];
        return now - before >= count * EVENTS_PER_MESSAGE;
      }, limitMs, 100);
      if (!ok) throw new Error(`${name}: ${seen - before} of ${count * EVENTS_PER_MESSAGE} webhooks within ${limitMs} ms`);
      return { delivered: seen - before, seconds: (last - from) / 1000, acceptS };
    };
    try {
      const warmup = values.warmup === undefined ? Math.max(300, senders.length) : Number(values.warmup);
      if (warmup > 0) await sendAndSettle(warmup, senders.length - (warmup % senders.length));
      const traced = values.trace ? await traceSnapshot(pid, folder) : undefined;
      const load0 = loadavg()[0]!;
      const cpu0 = cpuMs(pid)!;
      const io0 = io(pid);
      const burst = Number(values.burst);
      const burstFrom = Date.now();
      const result = await sendAndSettle(burst, 0);
      const cpu = cpuMs(pid)! - cpu0;
      const io1 = io(pid);
      if (traced) traceReport(name, traced, await traceSnapshot(pid, folder), Number(values.burst));
      const spent = Object.fromEntries(Object.keys(io1).map((key) => [key, io1[key as keyof Io] - io0[key as keyof Io]])) as unknown as Io;
      const stalls = values.stalls ? stallsWithin(stallsFile, burstFrom, burstFrom + result.seconds * 1000) : undefined;
      return { name, run, perS: result.delivered / result.seconds, seconds: result.seconds, acceptS: result.acceptS, cpuMs: cpu, io: spent, load: [load0, loadavg()[0]!], rssMiB: (rssKiB(pid) ?? 0) / 1024, stalls };
    } finally {
      await svc.child.stop();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

interface TraceTotals {
  transactions: Record<string, { commits: number; frames: number }>;
  statements: Record<string, { calls: number; ms: number }>;
  checkpoints: { commits: number; ms: number; copied: number; otherCommits: number; otherMs: number; maxMs: number };
}

/** Asks svc's bench/walFrames.ts for its totals (SIGUSR2) and reads them. */
async function traceSnapshot(pid: number, folder: string): Promise<TraceTotals> {
  const file = join(folder, `walframes-${pid}.jsonl`);
  const lines = () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').length : 0);
  const before = lines();
  process.kill(pid, 'SIGUSR2');
  if (!(await waitUntil(() => lines() > before, 10_000, 20))) throw new Error('no trace from svc (bench/walFrames.ts)');
  return JSON.parse(readFileSync(file, 'utf8').trim().split('\n').at(-1)!) as TraceTotals;
}

function traceReport(name: string, from: TraceTotals, to: TraceTotals, messages: number): void {
  const transactions = Object.entries(to.transactions)
    .map(([key, value]) => ({ key, commits: value.commits - (from.transactions[key]?.commits ?? 0), frames: value.frames - (from.transactions[key]?.frames ?? 0) }))
    .filter((row) => row.commits > 0)
    .sort((a, b) => b.frames - a.frames);
  const statements = Object.entries(to.statements)
    .map(([key, value]) => ({ key, calls: value.calls - (from.statements[key]?.calls ?? 0), ms: value.ms - (from.statements[key]?.ms ?? 0) }))
    .filter((row) => row.calls > 0)
    .sort((a, b) => b.ms - a.ms);
  const frames = transactions.reduce((sum, row) => sum + row.frames, 0);
  const commits = transactions.reduce((sum, row) => sum + row.commits, 0);
  const ms = statements.reduce((sum, row) => sum + row.ms, 0);
  console.log(`  ${name}: ${frames} WAL frames (${(frames / messages).toFixed(1)}/msg) in ${commits} commits; SQL ${ms.toFixed(0)} ms (${(ms / messages).toFixed(2)} ms/msg)`);
  const c = (key: keyof TraceTotals['checkpoints']) => to.checkpoints[key] - from.checkpoints[key];
  console.log(
    `    commits that checkpointed: ${c('commits')}, ${c('ms').toFixed(0)} ms, ${c('copied')} frames copied (${(c('copied') / messages).toFixed(1)}/msg); ` +
      `other commits ${c('otherCommits')}, ${c('otherMs').toFixed(0)} ms; longest checkpointing commit since start ${to.checkpoints.maxMs.toFixed(0)} ms`,
  );
  for (const row of transactions.slice(0, 8)) {
    console.log(`    frames ${String(row.frames).padStart(7)} (${(row.frames / messages).toFixed(1)}/msg) commits ${String(row.commits).padStart(6)} ${(row.frames / row.commits).toFixed(1)}/commit  ${row.key}`);
  }
  for (const row of statements.slice(0, 12)) {
    console.log(`    ms ${row.ms.toFixed(0).padStart(6)} calls ${String(row.calls).padStart(7)} ${((row.ms / row.calls) * 1000).toFixed(0)} µs  ${row.key.slice(0, 110)}`);
  }
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
};

async function burst(): Promise<void> {
  const dbs = (values.db ?? []).map((db) => ({ db: resolve(db), senders: JSON.parse(readFileSync(`${resolve(db)}.senders.json`, 'utf8')) as Sender[] }));
  const svcs = (values.svc ?? [`this=${resolve(benchDir, '..')}`]).map((spec) => {
    const at = spec.indexOf('=');
    return { name: spec.slice(0, at), dir: resolve(spec.slice(at + 1)) };
  });
  const receiversChild = spawnNode('receivers', join(benchDir, 'receivers.ts'), [
    JSON.stringify(Array.from({ length: RECEIVERS }, (_, i) => ({ name: `r${i}`, kind: 'fast' }))),
  ]);
  const receivers = JSON.parse((await receiversChild.waitForLine(/^receivers listening /, 20_000)).slice('receivers listening '.length)) as {
    control: string;
    urls: Record<string, string>;
  };
  const burstSize = Number(values.burst);
  const results: BurstResult[] = [];
  for (let run = 1; run <= Number(values.runs); run++) {
    for (const { db, senders } of dbs) for (const svc of svcs) {
      const at = new Date().toISOString().slice(11, 19);
      const name = dbs.length > 1 ? `${svc.name}@${basename(db)}` : svc.name;
      const result = await burstOnce(name, svc.dir, run, db, senders, receivers);
      results.push(result);
      const per = (n: number) => (n / burstSize).toFixed(0);
      console.log(
        `${at} ${name} run ${run}: ${result.perS.toFixed(0)} webhooks/s (${result.seconds.toFixed(1)} s, sends ${result.acceptS.toFixed(1)} s); ` +
          `svc CPU ${result.cpuMs.toFixed(0)} ms (${(result.cpuMs / burstSize).toFixed(2)} ms/msg); per msg: wchar ${per(result.io.wchar)} B, ` +
          `write_bytes ${per(result.io.write_bytes)} B, syscw ${(result.io.syscw / burstSize).toFixed(1)}, syscr ${(result.io.syscr / burstSize).toFixed(1)}, ` +
          `rchar ${per(result.io.rchar)} B; RSS ${result.rssMiB.toFixed(0)} MiB; load ${result.load[0].toFixed(1)}→${result.load[1].toFixed(1)}` +
          (result.stalls ? `; loop stalls ≥ 50 ms: ${result.stalls.count}, ${result.stalls.ms} ms in all, longest ${result.stalls.maxMs} ms` : ''),
      );
    }
  }
  for (const name of new Set(results.map((result) => result.name))) {
    const mine = results.filter((result) => result.name === name);
    console.log(
      `${name} medians of ${mine.length}: ${median(mine.map((r) => r.perS)).toFixed(0)} webhooks/s, CPU ${median(mine.map((r) => r.cpuMs)).toFixed(0)} ms/burst, ` +
        `wchar ${(median(mine.map((r) => r.io.wchar)) / burstSize).toFixed(0)} B/msg, syscr ${(median(mine.map((r) => r.io.syscr)) / burstSize).toFixed(1)}/msg`,
    );
  }
  console.log(`RESULT ${JSON.stringify({ dbs: dbs.map(({ db }) => db), burst: burstSize, results })}`);
}

try {
  if (positionals[0] === 'seed') await seed();
  else if (positionals[0] === 'burst') await burst();
  else throw new Error('usage: spreadBurst.ts seed|burst …');
} finally {
  await stopAll();
}
