import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Sends a signal and resolves with the exit code (or the signal's name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Runs `svc serve` as its own process and resolves once it listens. */
export async function startServiceProcess(env: Record<string, string>, args = ['serve']): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', SVC_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  const url = await new Promise<string>((resolve, reject) => {
    // A bound for a process that never starts, not a measure: generous for a loaded machine.
    const timer = setTimeout(() => reject(new Error(`no start within 120 s:\n${output}`)), 120_000);
    const look = () => {
      const line = output.split('\n').find((candidate) => candidate.includes('"msg":"svc started"'));
      if (line) {
        clearTimeout(timer);
        resolve(/"url":"(http:\/\/[^"]+)"/.exec(line)?.[1] ?? '');
      }
    };
    child.stdout!.on('data', look);
    exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited before listening:\n${output}`));
    });
  });
  return {
    child,
    url,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs a one-shot svc command and resolves with its exit code and output. */
export async function runSvc(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH, SVC_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const [code] = await once(child, 'exit');
  return { code: code as number, output };
}
