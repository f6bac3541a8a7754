// One measured load: autocannon in its own process against a server process, with the server's
// CPU (and PostgreSQL's) read from /proc before and after.
import { join } from 'node:path';
import type { BenchDatabase } from './databases.ts';
import { cpuByName, cpuMs, cpuSpent, spawnNode } from './processes.ts';

export interface LoadResult {
  durationS: number;
  sent: number;
  answered: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  latencyP50: number;
  latencyP99: number;
  latencyMax: number;
}

export interface LoadFigures {
  result: LoadResult;
  /** CPU ms of the server process(es) during the load. */
  serverCpuMs: number;
  loadgenCpuMs: number;
  /** CPU ms of the PostgreSQL backends connected with the database's application_name. */
  pgBackendCpuMs: number | undefined;
  /** CPU ms of every postgres process on the machine (other users of the server included). */
  pgAllCpuMs: number | undefined;
}

async function backendPids(database: BenchDatabase): Promise<number[]> {
  const rows = await database.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [database.applicationName]);
  return rows.map((row) => row.pid);
}

export async function runLoad(
  benchDir: string,
  options: { url: string; connections: number; durationS: number; key?: string; firstIndex?: number },
  serverPids: number[],
  database?: BenchDatabase,
): Promise<LoadFigures> {
  const pg = database?.kind === 'postgres' ? database : undefined;
  const serverBefore = serverPids.map((pid) => cpuMs(pid) ?? 0);
  const pgBefore = pg ? cpuByName('postgres') : undefined;
  const loadgen = spawnNode('loadgen', join(benchDir, 'loadgen.ts'), [JSON.stringify(options)]);
  let loadgenCpu = 0;
  // The load generator's own CPU, read just before it exits (polled: /proc vanishes at exit).
  const poll = setInterval(() => {
    loadgenCpu = cpuMs(loadgen.pid) ?? loadgenCpu;
  }, 200);
  let line: string;
  let pgAfter: Map<number, number> | undefined;
  let pids: number[] = [];
  let serverAfter: number[] = [];
  try {
    line = await loadgen.waitForLine(/^RESULT /, (options.durationS + 60) * 1000);
    serverAfter = serverPids.map((pid) => cpuMs(pid) ?? 0);
    // Read the backends while the pool's connections are still open.
    if (pg) {
      pids = await backendPids(pg);
      pgAfter = cpuByName('postgres');
    }
  } finally {
    clearInterval(poll);
    await loadgen.stop();
  }
  const serverCpuMs = serverAfter.reduce((sum, after, i) => sum + after - serverBefore[i]!, 0);
  return {
    result: JSON.parse(line.slice('RESULT '.length)) as LoadResult,
    serverCpuMs,
    loadgenCpuMs: loadgenCpu,
    pgBackendCpuMs: pgBefore && pgAfter ? cpuSpent(pgBefore, pgAfter, pids) : undefined,
    pgAllCpuMs: pgBefore && pgAfter ? cpuSpent(pgBefore, pgAfter) : undefined,
  };
}
