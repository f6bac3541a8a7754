// Which threads of svc call fsync/fdatasync while it accepts and sends (the event loop's thread
// must make none): `svc serve` (SQLite, whole service) under `strace -f`, 400 sends at
// concurrency 8 through the sandbox, then SIGTERM; counts per thread, the main thread named.
//
//   node bench/fsyncThreads.ts [--svc-dir PATH] [--sends 400]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { call, createSender, ENCRYPTION_KEY, messageBody } from './svc.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: { 'svc-dir': { type: 'string', default: resolve(benchDir, '..') }, sends: { type: 'string', default: '400' } },
});
const svcDir = values['svc-dir'];
const dir = mkdtempSync(join(tmpdir(), 'svc-fsync-'));
const traceFile = join(dir, 'strace.log');
const child = spawn('strace', ['-f', '-e', 'trace=fsync,fdatasync', '-o', traceFile, process.execPath, join(svcDir, 'src', 'main.ts'), 'serve'], {
  cwd: svcDir,
  env: { ...process.env, HOST: '127.0.0.1', PORT: '0', SVC_ENCRYPTION_KEY: ENCRYPTION_KEY, SVC_LOG_LEVEL: 'info', SVC_DATABASE_URL: `sqlite:${join(dir, 'svc.db')}`, SVC_API_RATE_LIMIT: '10000000' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise<string>((resolveUrl, reject) => {
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const started = buffered.split('\n').find((line) => line.includes('"msg":"svc started"'));
    const match = started === undefined ? null : /"url":"(http:\/\/[^"]+)"/.exec(started);
    if (match) resolveUrl(match[1]!);
  });
  child.on('exit', () => reject(new Error('svc exited')));
});
const sender = await createSender(url);
const linesBefore = readFileSync(traceFile, 'utf8').split('\n').length;
const sends = Number(values.sends);
let next = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (next < sends) {
      const reply = await call(url, 'POST', '/v1/messages', { key: sender.key, body: messageBody(next++) });
      if (reply.status !== 202) throw new Error(`${reply.status} ${reply.text}`);
    }
  }),
);
// Their dispatch (the sandbox answers at once) settles within a second.
await new Promise((resolveWait) => setTimeout(resolveWait, 1000));
const linesAfterSends = readFileSync(traceFile, 'utf8').split('\n').length;
// svc itself (strace's child), not strace: a signalled strace detaches and lets it run.
const svcPid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]);
process.kill(svcPid, 'SIGTERM');
await new Promise((resolveExit) => child.on('exit', resolveExit));
const all = readFileSync(traceFile, 'utf8').split('\n');
const mainPid = svcPid;
const count = (from: number, to: number) => {
  const perThread = new Map<string, number>();
  for (const line of all.slice(from, to)) {
    // A call interrupted by another thread's line is logged twice (unfinished, then resumed).
    if (!/f(data)?sync\(/.test(line) || /resumed>/.test(line)) continue;
    const tid = Number(/^(\d+)/.exec(line)![1]);
    const name = tid === mainPid ? 'main thread' : `thread ${tid}`;
    perThread.set(name, (perThread.get(name) ?? 0) + 1);
  }
  return perThread;
};
console.log(`svc at ${svcDir}: fsync/fdatasync calls per thread`);
console.log('during the sends (and their dispatch):', Object.fromEntries(count(linesBefore - 1, linesAfterSends)));
console.log('whole run (start, sends, shutdown):', Object.fromEntries(count(0, all.length)));
rmSync(dir, { recursive: true, force: true });
