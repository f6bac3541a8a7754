import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A PostgreSQL cluster of the test's own, on a spare port, that the test can stop and start: a
// real database outage (restart, failover) without touching the shared server.

const BIN = existsSync('/usr/lib/postgresql')
  ? readdirSync('/usr/lib/postgresql')
      .map((version) => `/usr/lib/postgresql/${version}/bin`)
      .find((bin) => existsSync(join(bin, 'pg_ctl')))
  : undefined;

/** Why a private cluster cannot be made here, or undefined when it can. */
export function privatePostgresUnavailable(): string | undefined {
  if (!BIN) return 'no PostgreSQL server binaries (initdb, pg_ctl)';
  if (process.getuid?.() !== 0) return 'needs root to run the cluster as the postgres user';
  return undefined;
}

export interface PrivatePostgres {
  readonly url: string;
  start(): void;
  /** A fast shutdown: every session is terminated (57P01), as in a restart or failover. */
  stop(): void;
  destroy(): void;
}

function asPostgres(command: string, args: string[]): void {
  execFileSync('runuser', ['-u', 'postgres', '--', join(BIN!, command), ...args], { stdio: 'pipe', timeout: 60_000 });
}

export function createPrivatePostgres(): PrivatePostgres {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  const data = join(dir, 'data');
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const cluster: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']),
    stop: () => asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    destroy: () => {
      try {
        cluster.stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}
