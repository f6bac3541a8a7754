import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from 'pino';

// Under load V8 grows its young generation to its maximum (two semi-spaces of 64 MiB with Node
// 24's defaults: it doubles them each time as much as they hold has survived since the last
// doubling, which any long run reaches) and its old generation to a multiple of what is live, and
// keeps both when the load stops: a 10,000-request fuzz left svc's RSS 175–215 MiB above where
// it started with the live heap flat (bench/README.md, issue #24). V8 gives that memory back only
// in a GC that reduces memory, which its own memory reducer seldom starts in a process that
// never goes fully quiet (svc's workers poll). This runs one when svc has gone idle after such
// growth: the pause of one full GC (a few tens of milliseconds), once, when nothing is waiting.

/** How often activity and the heap are looked at. */
const CHECK_MS = 1000;
/** Consecutive checks with the event loop this idle before trimming. */
const IDLE_CHECKS = 2;
/** An event loop busier than this (share of time) is not idle. */
const IDLE_UTILIZATION = 0.05;
/** Trim only when V8 holds this much more than is in use (committed heap minus used). */
const SLACK_BYTES = 48 * 1024 * 1024;

export interface HeapTrimStats {
  /** Bytes V8 holds for its heap, in use or not. */
  committed: number;
  /** Bytes in use (live or garbage not yet collected). */
  used: number;
}

export interface IdleHeapTrimOptions {
  logger: Logger;
  /** Tests: the heap's figures and the loop's utilization since the last call, and the GC. */
  heap?: () => HeapTrimStats;
  utilization?: () => number;
  collect?: () => void;
}

export interface IdleHeapTrim {
  /** One check, as the timer makes it; whether it trimmed. */
  check(): boolean;
  stop(): void;
}

function heapNow(): HeapTrimStats {
  const stats = v8.getHeapStatistics();
  return { committed: stats.total_heap_size, used: stats.used_heap_size };
}

function utilizationSinceLastCall(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}

let memoryReducingGc: (() => void) | undefined;

/** V8's full GC that also shrinks the heap ("last resort": what it runs on memory pressure). */
function collectAndShrink(): void {
  if (memoryReducingGc === undefined) {
    // gc() exists only with --expose-gc; a context made after the flag is set has it.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as (options: object) => void;
    memoryReducingGc = () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  }
  memoryReducingGc();
}

/** Starts the check timer (unref'd: it never keeps the process alive). */
export function startIdleHeapTrim(options: IdleHeapTrimOptions): IdleHeapTrim {
  const heap = options.heap ?? heapNow;
  const utilization = options.utilization ?? utilizationSinceLastCall();
  const collect = options.collect ?? collectAndShrink;
  let idleChecks = 0;
  const check = (): boolean => {
    idleChecks = utilization() < IDLE_UTILIZATION ? idleChecks + 1 : 0;
    if (idleChecks < IDLE_CHECKS) return false;
    const before = heap();
    if (before.committed - before.used < SLACK_BYTES) return false;
    const started = performance.now();
    collect();
    const after = heap();
    idleChecks = 0;
    options.logger.info(
      { ms: Math.round(performance.now() - started), committedMiB: [mib(before.committed), mib(after.committed)] },
      'heap trimmed after load',
    );
    return true;
  };
  const timer = setInterval(check, CHECK_MS).unref();
  return { check, stop: () => clearInterval(timer) };
}

const mib = (bytes: number) => Math.round(bytes / 1048576);
