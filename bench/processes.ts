// Child processes of the harness (svc, anchors, load generator, fake Graph API, receivers): spawned
// on 127.0.0.1, their output kept as a bounded tail, and every one of them killed at the end, even
// when the harness fails. Also CPU time and RSS of a process from /proc.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const TAIL_BYTES = 64 * 1024;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly pid: number;
  /** The last 64 KiB the process wrote (stdout and stderr). */
  output(): string;
  /** Resolves with the first line that matches (or rejects when the process exits or time runs out). */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
  readonly exited: Promise<number | string>;
}

const live = new Set<Child>();

/** Runs `node <script> ...args` (Node of the harness, so the pinned Node 24) as a child process. */
export function spawnNode(name: string, script: string, args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Child {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  let lineBuffer = '';
  const watchers = new Set<(line: string) => void>();
  const onData = (chunk: Buffer) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-TAIL_BYTES);
    lineBuffer += text;
    const lines = lineBuffer.split('\n');
    lineBuffer = lines.pop()!.slice(-TAIL_BYTES);
    if (watchers.size > 0) for (const line of lines) for (const watcher of watchers) watcher(line);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  const handle: Child = {
    name,
    process: child,
    pid: child.pid!,
    output: () => tail,
    exited,
    waitForLine(pattern, timeoutMs) {
      const seen = tail.split('\n').find((line) => pattern.test(line));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const done = (error: Error | undefined, line?: string) => {
          clearTimeout(timer);
          watchers.delete(watcher);
          if (error) reject(error);
          else resolve(line!);
        };
        const watcher = (line: string) => {
          if (pattern.test(line)) done(undefined, line);
        };
        const timer = setTimeout(() => done(new Error(`${name}: no ${pattern} within ${timeoutMs} ms:\n${tail.slice(-4000)}`)), timeoutMs);
        watchers.add(watcher);
        void exited.then((code) => done(new Error(`${name} exited (${code}) before ${pattern}:\n${tail.slice(-4000)}`)));
      });
    },
    async stop(graceMs = 5000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      live.delete(handle);
    },
  };
  live.add(handle);
  void exited.then(() => live.delete(handle));
  return handle;
}

/**
 * The bare-Fastify anchor (anchors/bareJson.ts) in its own process, answering GET `path` with
 * `bodies[path]` (svc's reply bytes): what serving those bytes over HTTP costs here. Until stopped.
 */
export async function startBareJson(benchDir: string, bodies: Record<string, string>): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawnNode('bare-json', join(benchDir, 'anchors', 'bareJson.ts'), [], { env: { ANCHOR_BODIES: JSON.stringify(bodies) } });
  const line = await child.waitForLine(/^anchor listening /, 20_000);
  return { url: line.slice('anchor listening '.length).trim(), pid: child.pid, stop: () => child.stop() };
}

/** Stops every child still running (SIGTERM, then SIGKILL). */
export async function stopAll(graceMs = 3000): Promise<void> {
  await Promise.all([...live].map((child) => child.stop(graceMs)));
}

// A last resort: whatever way the harness ends, no child outlives it.
process.on('exit', () => {
  for (const child of live) child.process.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of live) child.process.kill('SIGKILL');
    process.exit(130);
  });
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: split after it.
    const close = stat.lastIndexOf(')');
    return [stat.slice(stat.indexOf('(') + 1, close), ...stat.slice(close + 2).split(' ')];
  } catch {
    return undefined;
  }
}

/** utime + stime of a process (all its threads), in milliseconds; undefined once it is gone. */
export function cpuMs(pid: number): number | undefined {
  const fields = statFields(pid);
  if (!fields) return undefined;
  // After the name: state is fields[1]; utime and stime are fields 14 and 15 of /proc/pid/stat.
  return ((Number(fields[12]) + Number(fields[13])) * 1000) / TICKS_PER_SECOND;
}

/** A process's I/O counters (/proc/PID/io): bytes and calls through read/write, bytes to and from storage. */
export interface Io {
  rchar: number;
  wchar: number;
  syscr: number;
  syscw: number;
  read_bytes: number;
  write_bytes: number;
}

export function io(pid: number): Io {
  const text = readFileSync(`/proc/${pid}/io`, 'utf8');
  return Object.fromEntries(text.trim().split('\n').map((line) => [line.split(':')[0]!, Number(line.split(':')[1])])) as unknown as Io;
}

/** Resident set size in KiB. */
export function rssKiB(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** CPU ms of every process named `comm` on the machine, by pid. */
export function cpuByName(comm: string): Map<number, number> {
  const result = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && fields[0] === comm) result.set(Number(entry), ((Number(fields[12]) + Number(fields[13])) * 1000) / TICKS_PER_SECOND);
  }
  return result;
}

/** CPU spent between two snapshots by the given pids (a pid absent from `before` started since). */
export function cpuSpent(before: Map<number, number>, after: Map<number, number>, pids?: Iterable<number>): number {
  let total = 0;
  for (const pid of pids ?? after.keys()) {
    const end = after.get(pid);
    if (end !== undefined) total += end - (before.get(pid) ?? 0);
  }
  return total;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `everyMs` until it returns true or `timeoutMs` passes; returns whether it did. */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(everyMs);
  }
  return false;
}
