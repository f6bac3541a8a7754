// RSS and live heap of svc over a fuzz-like run of hostile requests (issue #24: "RSS growth over
// a 10,000-request fuzz ≤ 100 MiB with the live heap flat"). A mix of valid sends, malformed and
// oversized bodies, NUL characters, unknown ids and pages, requests the HTTP parser refuses,
// unauthenticated calls and unsigned Meta webhooks, c=16. The live heap is read after a full GC:
// a heap snapshot (--heapsnapshot-signal) forces one, before and after the run.
//
//   node bench/fuzzRss.ts [--requests 10000] [--db sqlite|postgres] [--no-snapshots] [--svc-dir PATH]
//     [--max-growth-mib 100] [--max-live-growth-mib 10]   (exit 1 when exceeded)
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type DatabaseKind, dropBenchDatabases, freshDatabase } from './databases.ts';
import { rssKiB, sleep, stopAll, waitUntil } from './processes.ts';
import { call, createSender, messageBody, startSvc } from './svc.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  allowNegative: true,
  options: {
    'svc-dir': { type: 'string', default: resolve(benchDir, '..') },
    requests: { type: 'string', default: '10000' },
    db: { type: 'string', default: 'sqlite' },
    // Heap snapshots cost RSS of their own (≈ 90 MiB here): without them, RSS alone.
    snapshots: { type: 'boolean', default: true },
    // The check (issue #24): exit 1 when RSS grew more than this, or the heap snapshot (what is
    // live after a full GC) by more than --max-live-growth-mib.
    'max-growth-mib': { type: 'string', default: '100' },
    'max-live-growth-mib': { type: 'string', default: '10' },
  },
});

const svcDir = resolve(values['svc-dir']);
const mib = (kib: number | undefined) => (kib ?? 0) / 1024;

function rawExchange(port: number, payload: string): Promise<void> {
  return new Promise((resolvePromise) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(payload));
    // The answer's first bytes are enough (a keep-alive answer would hold the socket open).
    socket.on('data', () => socket.destroy());
    socket.on('error', () => resolvePromise());
    socket.on('close', () => resolvePromise());
    socket.setTimeout(5000, () => socket.destroy());
  });
}

async function send(url: string, method: string, options: { key?: string; raw?: string; headers?: Record<string, string> } = {}): Promise<number> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.raw !== undefined) headers['content-type'] ??= 'application/json';
  try {
    const response = await fetch(url, { method, headers, ...(options.raw !== undefined && { body: options.raw }) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/** The svc process's live heap after a full GC: a heap snapshot (written in svcDir, then removed). */
async function liveHeapMiB(pid: number, opsUrl: string): Promise<{ heapMiB: number; snapshotMiB: number }> {
  const before = new Set(readdirSync(svcDir).filter((name) => name.endsWith('.heapsnapshot')));
  process.kill(pid, 'SIGUSR2');
  let file: string | undefined;
  let lastSize = -1;
  await waitUntil(() => {
    file = readdirSync(svcDir).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    if (!file) return false;
    const size = statSync(join(svcDir, file)).size;
    const stable = size > 0 && size === lastSize;
    lastSize = size;
    return stable;
  }, 120_000, 500);
  const metrics = await (await fetch(`${opsUrl}/metrics`)).text();
  const heap = Number(/^svc_nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1] ?? Number.NaN) / 1048576;
  const snapshotMiB = file ? statSync(join(svcDir, file)).size / 1048576 : Number.NaN;
  if (file) rmSync(join(svcDir, file));
  return { heapMiB: heap, snapshotMiB };
}

/** V8's committed heap by space, MiB. */
async function heapSpacesMiB(opsUrl: string): Promise<string> {
  const metrics = await (await fetch(`${opsUrl}/metrics`)).text();
  return [...metrics.matchAll(/^svc_nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\S+)$/gm)]
    .map((m) => `${m[1]} ${(Number(m[2]) / 1048576).toFixed(1)}`)
    .join(', ');
}

/** V8's committed heap (total of every space), MiB: what it holds from the OS, live or not. */
async function heapTotalMiB(opsUrl: string): Promise<number> {
  const metrics = await (await fetch(`${opsUrl}/metrics`)).text();
  return Number(/^svc_nodejs_heap_size_total_bytes (\S+)$/m.exec(metrics)?.[1] ?? Number.NaN) / 1048576;
}

/**
 * Where the process's resident memory is, from /proc/<pid>/smaps: the brk heap (glibc's main
 * arena), anonymous mappings by size (glibc's thread arenas are 64 MiB reservations; V8's pages
 * are 256 KiB), file mappings.
 */
function residentBreakdown(pid: number): string {
  const groups = new Map<string, number>();
  let current = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const size = (Number.parseInt(header[2]!, 16) - Number.parseInt(header[1]!, 16)) / 1024;
      const name = header[3]!;
      current = name === '[heap]' ? 'brk heap' : name.startsWith('/') ? 'files' : name ? name : size >= 60 * 1024 ? 'anon ≥ 60 MiB' : size >= 1024 ? 'anon 1–60 MiB' : 'anon < 1 MiB';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) groups.set(current, (groups.get(current) ?? 0) + Number(rss[1]));
    // Pages given back with MADV_FREE: still counted in RSS until the kernel needs them.
    const lazy = /^LazyFree:\s+(\d+) kB/.exec(line);
    if (lazy) groups.set('(of which LazyFree)', (groups.get('(of which LazyFree)') ?? 0) + Number(lazy[1]));
  }
  return [...groups].sort((a, b) => b[1] - a[1]).map(([name, kib]) => `${name} ${(kib / 1024).toFixed(1)}`).join(', ');
}

async function externalMiB(opsUrl: string): Promise<number> {
  const metrics = await (await fetch(`${opsUrl}/metrics`)).text();
  return Number(/^svc_nodejs_external_memory_bytes (\S+)$/m.exec(metrics)?.[1] ?? Number.NaN) / 1048576;
}

const kind = values.db as DatabaseKind;
const database = await freshDatabase(kind, process.env.SVC_TEST_POSTGRES_URL || undefined);
try {
  const svc = await startSvc(
    svcDir,
    { SVC_DATABASE_URL: database.url, SVC_API_RATE_LIMIT: '10000000', SVC_PROVIDER_MAX_MPS: '100000' },
    'all',
    { nodeOptions: '--heapsnapshot-signal=SIGUSR2' },
  );
  const opsUrl = /"opsUrl":"(http:\/\/[^"]+)"/.exec(await svc.child.waitForLine(/"msg":"svc started"/, 1000))?.[1];
  if (!opsUrl) throw new Error('no operator port');
  const base = svc.url!;
  const port = Number(new URL(base).port);
  const sender = await createSender(base);
  const first = await call(base, 'POST', '/v1/messages', { key: sender.key, body: messageBody(0) });
  if (first.status !== 202) throw new Error(`first send: ${first.status} ${first.text}`);
  await sleep(2000);
  const rssBefore = mib(rssKiB(svc.child.pid));
  const externalBefore = await externalMiB(opsUrl);
  const heapTotalBefore = await heapTotalMiB(opsUrl);
  const spacesBefore = await heapSpacesMiB(opsUrl);
  const residentBefore = residentBreakdown(svc.child.pid);
  const heapBefore = values.snapshots ? await liveHeapMiB(svc.child.pid, opsUrl) : undefined;
  const rssAfterFirstSnapshot = mib(rssKiB(svc.child.pid));

  const big = JSON.stringify({ name: 'x'.repeat(70 * 1024), ownerEmail: 'a@example.com' });
  const nested = '['.repeat(5000) + ']'.repeat(5000);
  const kinds: ((i: number) => Promise<unknown>)[] = [
    (i) => send(`${base}/v1/messages`, 'POST', { key: sender.key, raw: JSON.stringify(messageBody(i + 1)) }),
    () => send(`${base}/v1/messages`, 'POST', { key: sender.key, raw: '{"to":' }),
    (i) => send(`${base}/v1/messages`, 'POST', { key: sender.key, raw: JSON.stringify({ ...messageBody(i + 1), variables: { '1': 'a\u0000b' } }) }),
    () => send(`${base}/v1/messages?limit=200`, 'GET', { key: sender.key }),
    (i) => send(`${base}/v1/messages/msg_${i}nope`, 'GET', { key: sender.key }),
    () => send(`${base}/v1/projects`, 'POST', { raw: big }),
    (i) => send(`${base}/docs/nope${i}`, 'GET'),
    () => rawExchange(port, 'NOT HTTP AT ALL\r\n\r\n'),
    () => rawExchange(port, 'GET /v1/projects/me HTTP/1.1\r\nConnection: close\r\n\r\n'),
    () => send(`${base}/v1/templates`, 'GET', { key: 'svc_live_notakeyatallnotakeyatallnotakey' }),
    () => send(`${base}/v1/messages`, 'POST', { key: sender.key, raw: nested }),
    () => send(`${base}/openapi.json`, 'GET'),
    () => send(`${base}/v1/providers/whatsapp/webhook`, 'POST', { raw: '{"object":"whatsapp_business_account"}' }),
    (i) => send(`${base}/v1/messages?to=${encodeURIComponent('+55' + '\u0000')}&cursor=${i}`, 'GET', { key: sender.key }),
  ];
  const total = Number(values.requests);
  let next = 0;
  let peak = rssAfterFirstSnapshot;
  const sampler = setInterval(() => (peak = Math.max(peak, mib(rssKiB(svc.child.pid)))), 200);
  const started = Date.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < total) {
        const i = next++;
        await kinds[i % kinds.length]!(i);
      }
    }),
  );
  clearInterval(sampler);
  const seconds = (Date.now() - started) / 1000;
  await sleep(5000);
  const rssAfter = mib(rssKiB(svc.child.pid));
  const heapTotalAt5s = await heapTotalMiB(opsUrl);
  // How V8 gives memory back later, once idle (its memory reducer), for the record.
  const later: string[] = [];
  for (const at of [10, 20, 30]) {
    await sleep(at === 10 ? 5000 : 10_000);
    later.push(`${at} s: RSS ${mib(rssKiB(svc.child.pid)).toFixed(1)}, committed heap ${(await heapTotalMiB(opsUrl)).toFixed(1)}`);
  }
  const externalAfter = await externalMiB(opsUrl);
  const heapTotalAfter = await heapTotalMiB(opsUrl);
  const spacesAfter = await heapSpacesMiB(opsUrl);
  const residentAfter = residentBreakdown(svc.child.pid);
  const heapAfter = values.snapshots ? await liveHeapMiB(svc.child.pid, opsUrl) : undefined;
  console.log(`${total} requests in ${seconds.toFixed(1)} s (${kind})`);
  console.log(
    `RSS MiB: before ${rssBefore.toFixed(1)} (after the first snapshot ${rssAfterFirstSnapshot.toFixed(1)}), peak ${peak.toFixed(1)}, ` +
      `after (5 s idle) ${rssAfter.toFixed(1)}: growth ${(rssAfter - rssBefore).toFixed(1)} from before, ${(rssAfter - rssAfterFirstSnapshot).toFixed(1)} from after the first snapshot`,
  );
  console.log(`V8 external memory (Buffers, …) MiB: before ${externalBefore.toFixed(1)}, after ${externalAfter.toFixed(1)}`);
  console.log(`V8 committed heap MiB: before ${heapTotalBefore.toFixed(1)}, after ${heapTotalAfter.toFixed(1)}`);
  console.log(`  committed heap at 5 s idle ${heapTotalAt5s.toFixed(1)}; later, idle: ${later.join('; ')}`);
  console.log(`  by space before: ${spacesBefore}\n  by space after:  ${spacesAfter}`);
  console.log(`  resident MiB before: ${residentBefore}\n  resident MiB after:  ${residentAfter}`);
  if (heapBefore && heapAfter) {
    console.log(
      `live heap after a full GC, MiB: before ${heapBefore.heapMiB.toFixed(1)} (snapshot ${heapBefore.snapshotMiB.toFixed(1)}), ` +
        `after ${heapAfter.heapMiB.toFixed(1)} (snapshot ${heapAfter.snapshotMiB.toFixed(1)})`,
    );
  }
  const failures: string[] = [];
  // A snapshot leaves ≈ 100 MiB of malloc'd memory of its own: with snapshots, growth counts from after the first.
  const growth = rssAfter - (values.snapshots ? rssAfterFirstSnapshot : rssBefore);
  if (growth > Number(values['max-growth-mib'])) failures.push(`RSS grew ${growth.toFixed(1)} MiB (limit ${values['max-growth-mib']})`);
  if (heapBefore && heapAfter && heapAfter.snapshotMiB - heapBefore.snapshotMiB > Number(values['max-live-growth-mib'])) {
    failures.push(`the live heap (snapshot) grew ${(heapAfter.snapshotMiB - heapBefore.snapshotMiB).toFixed(1)} MiB (limit ${values['max-live-growth-mib']})`);
  }
  console.log(failures.length === 0 ? 'check: pass' : `check: FAIL — ${failures.join('; ')}`);
  if (failures.length > 0) process.exitCode = 1;
  await svc.child.stop();
} finally {
  await stopAll();
  await database.close();
  if (kind === 'sqlite') await dropBenchDatabases(undefined);
}
