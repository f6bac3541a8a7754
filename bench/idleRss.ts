// Idle RSS of svc as the accept scenario measures it (after setup and one send, 2 s idle), and
// after each of N loads (autocannon POSTs, c=64) to see whether it grows: issue #11's "idle RSS
// ≤ 1.5 × bare Fastify; no growth over 10 repeated load runs".
//
//   node bench/idleRss.ts [--svc-dir PATH] [--loads 10] [--duration 5] [--db sqlite|postgres] [--node-options '…'] [--snapshot] [--idle 5]
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type DatabaseKind, dropBenchDatabases, freshDatabase } from './databases.ts';
import { runLoad } from './load.ts';
import { rssKiB, sleep, stopAll } from './processes.ts';
import { call, createSender, messageBody, startSvc } from './svc.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    'svc-dir': { type: 'string', default: resolve(benchDir, '..') },
    loads: { type: 'string', default: '0' },
    duration: { type: 'string', default: '5' },
    db: { type: 'string', default: 'sqlite' },
    'node-options': { type: 'string' },
    snapshot: { type: 'boolean', default: false },
    idle: { type: 'string', default: '5' },
  },
});

const kind = values.db as DatabaseKind;
const database = await freshDatabase(kind, process.env.SVC_TEST_POSTGRES_URL || undefined);
try {
  const svc = await startSvc(resolve(values['svc-dir']), {
    SVC_DATABASE_URL: database.url,
    SVC_PROVIDER_MAX_MPS: '100000',
    SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000',
    SVC_API_RATE_LIMIT: '10000000',
  }, 'all', { nodeOptions: values['node-options'] });
  const opsUrl = /"opsUrl":"(http:\/\/[^"]+)"/.exec(await svc.child.waitForLine(/"msg":"svc started"/, 1000))?.[1];
  const sender = await createSender(svc.url!);
  const first = await call(svc.url!, 'POST', '/v1/messages', { key: sender.key, body: messageBody(99_999_999 - 30_000_000) });
  if (first.status !== 202) throw new Error(`first send: ${first.status} ${first.text}`);
  await sleep(Number(process.env.IDLE_FIRST_MS ?? 2000));
  const idle = [(rssKiB(svc.child.pid) ?? 0) / 1024];
  for (let load = 0; load < Number(values.loads); load++) {
    const url = `${svc.url}/v1/messages`;
    const { result } = await runLoad(benchDir, { url, connections: 64, durationS: Number(values.duration), key: sender.key, firstIndex: load * 1_000_000 }, [svc.child.pid]);
    await sleep(Number(values.idle) * 1000);
    idle.push((rssKiB(svc.child.pid) ?? 0) / 1024);
    console.error(`load ${load + 1}: ${result.ok2xx} 2xx, idle RSS after ${idle.at(-1)!.toFixed(1)} MiB`);
  }
  console.log(`idle RSS MiB: ${idle.map((mib) => mib.toFixed(1)).join(' → ')}`);
  // The V8 heap as the process's own metrics see it (the operator port).
  if (opsUrl) {
    const metrics = await (await fetch(`${opsUrl}/metrics`)).text();
    const mib = (name: string) => (Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? Number.NaN) / 1048576).toFixed(1);
    console.log(
      `V8 heap used ${mib('svc_nodejs_heap_size_used_bytes')} MiB of ${mib('svc_nodejs_heap_size_total_bytes')} MiB; ` +
        `external ${mib('svc_nodejs_external_memory_bytes')} MiB; RSS ${mib('svc_process_resident_memory_bytes')} MiB`,
    );
    const spaces = [...metrics.matchAll(/^svc_nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\S+)$/gm)];
    console.log(`V8 heap spaces (total MiB): ${spaces.map(([, space, bytes]) => `${space} ${(Number(bytes) / 1048576).toFixed(1)}`).join(', ')}`);
  }
  if (values.snapshot) {
    // With --node-options=--heapsnapshot-signal=SIGUSR2: a heap snapshot in svc's folder.
    svc.child.process.kill('SIGUSR2');
    await sleep(20_000);
    console.log(`RSS after the snapshot's full GC: ${((rssKiB(svc.child.pid) ?? 0) / 1024).toFixed(1)} MiB`);
  }
  await svc.child.stop();
} finally {
  await stopAll();
  await database.close();
  if (kind === 'sqlite') await dropBenchDatabases(undefined);
}
