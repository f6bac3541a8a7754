// Where the accept path spends its CPU: svc (whole service, or --role api) runs under
// `node --cpu-prof` in its own process while autocannon (its own process, as in the accept
// scenario) POSTs /v1/messages at c=64; then the profile is summarised: self time by function,
// and the inclusive time of the parts of a request named in PARTS below.
//
//   node bench/profileAccept.ts [--db sqlite|postgres] [--role all|api] [--duration 10]
//                               [--svc-dir PATH] [--top 30] [--keep DIR] [--no-profile]
//                               [--read get|list]
//
// --read: GET /v1/messages/{id} or GET /v1/messages?limit=50 (60 messages sent first) instead of
// POSTing (bench/getLoadgen.ts).
// --no-profile: the same load and figures without the profiler (a quick A/B of two checkouts).
//
// Profiles are summaries for people: timings stay out of tests (see README.md).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { countWhere, type DatabaseKind, dropBenchDatabases, freshDatabase } from './databases.ts';
import { type LoadFigures, type LoadResult, runLoad } from './load.ts';
import { cpuMs, sleep, spawnNode, stopAll } from './processes.ts';
import { call, createSender, messageBody, startSvc } from './svc.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    role: { type: 'string', default: 'all' },
    duration: { type: 'string', default: '10' },
    'svc-dir': { type: 'string', default: resolve(benchDir, '..') },
    top: { type: 'string', default: '30' },
    keep: { type: 'string' },
    'no-profile': { type: 'boolean', default: false },
    read: { type: 'string' },
    'worker-process': { type: 'boolean', default: false },
  },
});

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Inclusive time of these functions (any frame whose name matches), each counted once per sample. */
const PARTS: [string, RegExp][] = [
  ['HTTP parse + route + reply (fastify)', /^(onRequest|runPreParsing|handleRequest|routeHandler)$/],
  ['auth hook', /^(authenticate|authenticateRequest)$/],
  ['POST /v1/messages handler', /^(acceptMessage|postMessage)$/],
  ['accept group commit', /^#commitBatch$/],
  ['JSON schema validation (ajv)', /^validate\d*$|^wrapped$/],
  ['pino logging', /^(LOG|write|asJson)$/],
  ['prom-client metrics', /^(observe|inc)$/],
  ['Kysely compile', /^(compileQuery|compile)$/],
  ['node:sqlite run/all/prepare', /^(run|all|prepare)$/],
  ['dispatcher', /^(#refill|#claim|#submit|#pump|#send)$/],
  ['outcome recorder', /^(record|#commit)$/],
  ['sandbox provider', /^(sendMessage|#commitRecords)$/],
  ['garbage collection', /^\(garbage collector\)$/],
];

function summarise(profile: Profile, top: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const label = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '~/').replace(/^.*\/(src|bench)\//, '$1/');
    return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
  };
  const selfByLabel = new Map<string, number>();
  for (const [id, us] of self) {
    const key = label(byId.get(id)!);
    selfByLabel.set(key, (selfByLabel.get(key) ?? 0) + us);
  }
  const idle = [...self].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, us]) => a + us, 0);
  const busy = total - idle;
  const ms = (us: number) => (us / 1000).toFixed(0).padStart(6);
  const pct = (us: number) => ((us / busy) * 100).toFixed(1).padStart(5) + ' %';
  const lines = [`profiled ${ms(total)} ms, busy (not idle) ${ms(busy)} ms`, '', '| self ms | % of busy | function |', '|---:|---:|---|'];
  for (const [key, us] of [...selfByLabel].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    if (key.startsWith('(idle)')) continue;
    lines.push(`| ${ms(us)} | ${pct(us)} | \`${key}\` |`);
  }
  // Inclusive: a sample counts for a part when any frame on its stack matches.
  const inclusive = new Map<string, number>();
  const stackParts = new Map<number, Set<string>>();
  const partsOf = (id: number): Set<string> => {
    let parts = stackParts.get(id);
    if (parts) return parts;
    const up = parent.get(id);
    parts = new Set(up === undefined ? [] : partsOf(up));
    const name = byId.get(id)!.callFrame.functionName;
    for (const [part, pattern] of PARTS) if (pattern.test(name)) parts.add(part);
    stackParts.set(id, parts);
    return parts;
  };
  for (const [id, us] of self) for (const part of partsOf(id)) inclusive.set(part, (inclusive.get(part) ?? 0) + us);
  lines.push('', '| inclusive ms | % of busy | part |', '|---:|---:|---|');
  for (const [part] of PARTS) {
    const us = inclusive.get(part) ?? 0;
    lines.push(`| ${ms(us)} | ${pct(us)} | ${part} |`);
  }
  return lines.join('\n');
}

/** GETs at c=64 from bench/getLoadgen.ts, with the server's CPU. */
async function readLoad(url: string, key: string, durationS: number, pid: number): Promise<LoadFigures> {
  const before = cpuMs(pid) ?? 0;
  const loadgen = spawnNode('get-loadgen', join(benchDir, 'getLoadgen.ts'), [JSON.stringify({ url, connections: 64, durationS, key })]);
  try {
    const line = await loadgen.waitForLine(/^RESULT /, (durationS + 60) * 1000);
    const result = JSON.parse(line.slice('RESULT '.length)) as LoadResult;
    return { result, serverCpuMs: (cpuMs(pid) ?? 0) - before, loadgenCpuMs: 0, pgBackendCpuMs: undefined, pgAllCpuMs: undefined };
  } finally {
    await loadgen.stop();
  }
}

const kind = values.db as DatabaseKind;
const postgresUrl = process.env.SVC_TEST_POSTGRES_URL || undefined;
const profileDir = values.keep ? resolve(values.keep) : mkdtempSync(join(tmpdir(), 'svc-profile-'));
const database = await freshDatabase(kind, postgresUrl);
try {
  const svc = await startSvc(
    resolve(values['svc-dir']),
    {
      SVC_DATABASE_URL: database.url,
      SVC_PROVIDER_MAX_MPS: '100000',
      SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000',
      SVC_API_RATE_LIMIT: '10000000',
      ...(!values['no-profile'] && { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` }),
    },
    values.role as 'all' | 'api',
  );
  // --worker-process (with --role api): the workers in a second process on the same database, the
  // nearest thing to a worker thread that svc can run today (on SQLite its writes then meet the
  // API's through SQLite's file lock and busy handler). Its CPU is counted with svc's.
  const worker = values['worker-process']
    ? await startSvc(resolve(values['svc-dir']), { SVC_DATABASE_URL: database.url, SVC_PROVIDER_MAX_MPS: '100000', SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000' }, 'worker')
    : undefined;
  const pids = [svc.child.pid, ...(worker ? [worker.child.pid] : [])];
  const sender = await createSender(svc.url!);
  const first = await call(svc.url!, 'POST', '/v1/messages', { key: sender.key, body: messageBody(99_999_999 - 30_000_000) });
  if (first.status !== 202) throw new Error(`first send: ${first.status} ${first.text}`);
  let load: LoadFigures;
  if (values.read === undefined) {
    const url = `${svc.url}/v1/messages`;
    await runLoad(benchDir, { url, connections: 64, durationS: 2, key: sender.key, firstIndex: 1_000_000 }, pids);
    load = await runLoad(benchDir, { url, connections: 64, durationS: Number(values.duration), key: sender.key }, pids, database);
  } else {
    let lastId = '';
    for (let i = 0; i < 60; i++) lastId = (await call(svc.url!, 'POST', '/v1/messages', { key: sender.key, body: messageBody(i) })).body.id;
    await sleep(1500);
    const url = `${svc.url}${values.read === 'get' ? `/v1/messages/${lastId}` : '/v1/messages?limit=50'}`;
    await readLoad(url, sender.key, 2, svc.child.pid);
    load = await readLoad(url, sender.key, Number(values.duration), svc.child.pid);
  }
  const { result } = load;
  console.log(
    `${kind}, role ${values.role}${values.read ? `, GET ${values.read}` : ''}: ${(result.ok2xx / result.durationS).toFixed(0)} 2xx/s, p99 ${result.latencyP99} ms, ` +
      `server CPU ${(load.serverCpuMs / Math.max(1, result.answered)).toFixed(3)} ms/req` +
      (load.pgBackendCpuMs === undefined ? '' : `, PostgreSQL backends ${(load.pgBackendCpuMs / Math.max(1, result.answered)).toFixed(3)} ms/req`) +
      (values['no-profile'] ? '' : ' (profiler on: slower than the harness)'),
  );
  if (values.read === undefined) {
    const total = await countWhere(database, 'messages');
    console.log(`messages stored: ${total}; still QUEUED when the load stopped: ${await countWhere(database, 'messages', "status = 'QUEUED'")}`);
    // How long the dispatch takes to catch up (issue #24: no backlog left when the load stops).
    const stopped = Date.now();
    let queued = Number.POSITIVE_INFINITY;
    while (queued > 0 && Date.now() - stopped < 30_000) {
      await sleep(250);
      queued = await countWhere(database, 'messages', "status = 'QUEUED'");
    }
    console.log(queued === 0 ? `none QUEUED ${((Date.now() - stopped) / 1000).toFixed(2)} s after the load stopped` : `${queued} still QUEUED 30 s after the load stopped`);
  }
  await worker?.child.stop(15_000);
  await svc.child.stop(15_000);
  if (!values['no-profile']) {
    const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no profile written in ${profileDir}`);
    console.log(summarise(JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Profile, Number(values.top)));
  }
} finally {
  await stopAll();
  await database.close();
  if (kind === 'sqlite') await dropBenchDatabases(undefined);
  if (!values.keep) rmSync(profileDir, { recursive: true, force: true });
}
