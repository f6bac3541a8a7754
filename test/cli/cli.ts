import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Runs the real `svc` (bin/svc.js) as a child process, as a user would, with a home folder of
// its own: the config it writes lands there, never in the developer's.

const BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliUser {
  readonly home: string;
  readonly configFile: string;
  /** The environment every run gets (HOME, XDG_CONFIG_HOME, SVC_BASE_URL…). */
  env: Record<string, string>;
  run(args: string[], options?: { input?: string; env?: Record<string, string> }): Promise<CliResult>;
  /** A command that runs until stopped (tail, listen), its output read as it comes. */
  start(args: string[], options?: { env?: Record<string, string> }): RunningCli;
  remove(): void;
}

export interface RunningCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The JSON lines written to stdout so far. */
  lines(): any[];
  /** SIGINT; resolves with the exit code. */
  stop(): Promise<number | null>;
}

function spawnCli(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** A user of the CLI against the svc at `baseUrl`, with a fresh home folder. */
export function cliUser(baseUrl: string): CliUser {
  const home = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  const user: CliUser = {
    home,
    configFile: join(home, '.config', 'svc', 'config.json'),
    env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), SVC_BASE_URL: baseUrl },
    async run(args, options = {}) {
      const child = spawnCli(args, { ...user.env, ...options.env });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (chunk) => (stdout += chunk));
      child.stderr!.on('data', (chunk) => (stderr += chunk));
      child.stdin!.end(options.input ?? '');
      const [code] = await once(child, 'exit');
      return { code: code as number, stdout, stderr };
    },
    start(args, options = {}) {
      const child = spawnCli(args, { ...user.env, ...options.env });
      child.stdin!.end();
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (chunk) => (stdout += chunk));
      child.stderr!.on('data', (chunk) => (stderr += chunk));
      const exited = once(child, 'exit').then(([code]) => code as number | null);
      return {
        child,
        stdout: () => stdout,
        stderr: () => stderr,
        lines: () =>
          stdout
            .split('\n')
            .filter((line) => line.trim() !== '')
            .map((line) => JSON.parse(line)),
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
          return exited;
        },
      };
    },
    remove: () => rmSync(home, { recursive: true, force: true }),
  };
  return user;
}

/** The sandbox at test speed. */
export const FAST_SANDBOX = {
  SVC_SANDBOX_REVIEW_DELAY_MS: '200',
  SVC_SANDBOX_DELIVERY_DELAY_MS: '50',
  SVC_SANDBOX_READ_DELAY_MS: '50',
  SVC_WEBHOOK_RETRY_SCHEDULE: '50ms',
};

/** A loopback URL nothing listens on (a port just freed). */
export async function closedUrl(): Promise<string> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return `http://127.0.0.1:${port}`;
}
