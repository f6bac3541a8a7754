// Event-loop stalls of a process, for explaining a benchmark's outliers: a 10 ms interval timer
// whose tick comes late marks the loop as blocked for that long. Loaded into svc with
// `node --import <bench>/loopStalls.ts` and BENCH_LOOP_STALLS_FILE set; each stall is appended to
// that file as a line "<start epoch ms> <duration ms>". The fake Graph API keeps its own (stallsSince).
import { appendFileSync } from 'node:fs';

const TICK_MS = 10;
/** A tick this much later than due counts as a stall. */
const STALL_MS = 50;

export interface Stall {
  at: number;
  ms: number;
}

/** Starts watching this process's event loop; `onStall` hears of every stall once it ends. */
export function watchLoopStalls(onStall: (stall: Stall) => void): void {
  let last = Date.now();
  setInterval(() => {
    const now = Date.now();
    const late = now - last - TICK_MS;
    if (late >= STALL_MS) onStall({ at: last + TICK_MS, ms: late });
    last = now;
  }, TICK_MS).unref();
}

const file = process.env.BENCH_LOOP_STALLS_FILE;
if (file) watchLoopStalls((stall) => appendFileSync(file, `${stall.at} ${stall.ms}\n`));
