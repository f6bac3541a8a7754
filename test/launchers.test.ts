import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.ts';
import { call } from './support/http.ts';
import { startTestServer, TEST_ENCRYPTION_KEY, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

// svc started the ways the README shows (npm start, npm run svc --, bin/svc.js on an old Node that
// re-runs itself on the pinned Node 24, or under a shell that does not pass signals on) stops
// when its launcher is stopped: a process manager's SIGTERM to the launcher never leaves svc
// running, and Ctrl-C on `messages tail` exits 0 through each of them.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/svc.js', import.meta.url));

/** The machine's own Node when it is older than the pinned one (the re-exec path of bin/svc.js). */
function oldNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const [major] = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim().slice(1).split('.').map(Number);
    if (major! < 24) return candidate;
  }
  return undefined;
}
const OLD_NODE = oldNode();

/** Live processes (zombies count as gone) by pid, with their parent and command line. */
function processes(): { pid: number; ppid: number; cmd: string }[] {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z') continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      found.push({ pid: Number(entry), ppid: Number(ppid), cmd });
    } catch {
      // gone while we looked
    }
  }
  return found;
}

/** Every process started, directly or not, by `pid`. */
function descendants(pid: number): number[] {
  const all = processes();
  const out: number[] = [];
  const walk = (parent: number) => {
    for (const child of all.filter((candidate) => candidate.ppid === parent)) {
      out.push(child.pid);
      walk(child.pid);
    }
  };
  walk(pid);
  return out;
}

function alive(pid: number): boolean {
  return processes().some((candidate) => candidate.pid === pid);
}

interface Launched {
  readonly child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  /** Both output pipes closed: everything written has been read. */
  ended: Promise<void>;
}

/** Starts `command` in a process group of its own, as a terminal or process manager would. */
function launch(command: string, args: string[], env: Record<string, string>): Launched {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  // Output ends when every process holding the pipes has closed them: the launcher and svc.
  const ended = Promise.all([once(child.stdout!, 'close'), once(child.stderr!, 'close')]).then(() => undefined);
  return { child, output: () => output, exited, ended };
}

/** A loopback port free now, with the two after it free too (PORT, PORT+1, PORT+2). */
async function freePortRun(): Promise<number> {
  for (;;) {
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    server.close();
    await once(server, 'close');
    if (port > 65530) continue;
    const taken = await Promise.all(
      [port + 1, port + 2].map(
        (candidate) =>
          new Promise<boolean>((resolve) => {
            const probe = createServer().once('error', () => resolve(true));
            probe.listen(candidate, '127.0.0.1', () => probe.close(() => resolve(false)));
          }),
      ),
    );
    if (!taken.includes(true)) return port;
  }
}

describe('svc stops with its launcher (SIGTERM)', () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase('sqlite');
  });
  after(async () => {
    await database.drop();
  });
  const env = () => ({ PORT: '0', SVC_OPS_PORT: '0', SVC_DATABASE_URL: database.url, SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });

  const launchers: { name: string; command: () => [string, string[]]; exitCode?: number; skip?: boolean }[] = [
    { name: 'npm start', command: () => ['npm', ['start', '--silent']], exitCode: 0 },
    { name: 'npm run svc -- serve --role api', command: () => ['npm', ['run', '--silent', 'svc', '--', 'serve', '--role', 'api']], exitCode: 0 },
    { name: 'node bin/svc.js serve (Node 24)', command: () => [process.execPath, [BIN, 'serve']], exitCode: 0 },
    { name: 'node bin/svc.js serve on the old Node (re-run on Node 24)', command: () => [OLD_NODE!, [BIN, 'serve']], exitCode: 0, skip: !OLD_NODE },
    // A shell that waits for svc and dies of SIGTERM without passing it on (what `npx svc` does).
    { name: 'a shell that does not forward signals', command: () => ['/bin/sh', ['-c', `"${process.execPath}" "${BIN}" serve; exit $?`]] },
    { name: 'a shell that does not forward signals, old Node', command: () => ['/bin/sh', ['-c', `"${OLD_NODE}" "${BIN}" serve; exit $?`]], skip: !OLD_NODE },
  ];

  for (const launcher of launchers) {
    it(`through ${launcher.name}`, { skip: launcher.skip }, async () => {
      const [command, args] = launcher.command();
      const started = launch(command, args, env());
      try {
        await until('svc to start', () => started.output().includes('svc started'), 30_000).catch((error: Error) =>
          assert.fail(`${error.message}\n${started.output()}`),
        );
        const service = [started.child.pid!, ...descendants(started.child.pid!)];
        started.child.kill('SIGTERM');
        const code = await started.exited;
        if (launcher.exitCode !== undefined) assert.equal(code, launcher.exitCode, started.output());
        await until('every svc process to be gone', () => service.every((pid) => !alive(pid)));
        // What svc wrote last may still be on its way through the pipe.
        await started.ended;
        assert.match(started.output(), /"signal":"SIGTERM","msg":"shutting down"/, 'svc shut down as asked, not killed');
      } finally {
        for (const pid of descendants(started.child.pid!)) process.kill(pid, 'SIGKILL');
      }
    });
  }
});

for (const kind of databaseKinds()) {
  describe(`an api and a worker started with one environment (${kind})`, () => {
    it('get operator ports of their own by default (PORT+1, PORT+2)', async () => {
      const database = await createTestDatabase(kind);
      const port = await freePortRun();
      const env = { HOST: '127.0.0.1', PORT: String(port), SVC_DATABASE_URL: database.url, SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY };
      // As the README's recipe: migrate once, then start the processes.
      const migrated = launch(process.execPath, [BIN, 'migrate'], env);
      assert.equal(await migrated.exited, 0, migrated.output());
      const api = launch(process.execPath, [BIN, 'serve', '--role', 'api'], env);
      const worker = launch(process.execPath, [BIN, 'serve', '--role', 'worker'], env);
      try {
        for (const started of [api, worker]) {
          await until('svc to start', () => started.output().includes('svc started') || started.child.exitCode !== null, 30_000);
          assert.match(started.output(), /svc started/, started.output());
        }
        assert.match(api.output(), new RegExp(`"opsUrl":"http://127\\.0\\.0\\.1:${port + 1}"`));
        assert.match(worker.output(), new RegExp(`"opsUrl":"http://127\\.0\\.0\\.1:${port + 2}"`));
        assert.equal((await call(`http://127.0.0.1:${port}`, 'GET', '/healthz')).status, 200);
        for (const opsPort of [port + 1, port + 2]) {
          assert.equal((await call(`http://127.0.0.1:${opsPort}`, 'GET', '/healthz')).status, 200);
          assert.equal((await call(`http://127.0.0.1:${opsPort}`, 'GET', '/metrics')).status, 200);
        }
      } finally {
        for (const started of [api, worker]) if (started.child.exitCode === null) started.child.kill('SIGTERM');
        const codes = [await api.exited, await worker.exited];
        await database.drop();
        assert.deepEqual(codes, [0, 0], api.output() + worker.output());
      }
    });
  });
}

describe('Ctrl-C on `svc messages tail` exits 0 through every launcher', () => {
  let server: TestServer;
  let key: string;
  before(async () => {
    server = await startTestServer('sqlite');
    key = (await server.createProject()).key;
  });
  after(async () => {
    await server.close();
  });

  const launchers: { name: string; command: () => [string, string[]]; skip?: boolean }[] = [
    { name: 'svc (bin/svc.js on Node 24)', command: () => [process.execPath, [BIN, 'messages', 'tail', '--interval', '100ms']] },
    { name: 'svc on the old Node (re-run on Node 24)', command: () => [OLD_NODE!, [BIN, 'messages', 'tail', '--interval', '100ms']], skip: !OLD_NODE },
    { name: 'npm run svc --', command: () => ['npm', ['run', '--silent', 'svc', '--', 'messages', 'tail', '--interval', '100ms']] },
  ];
  for (const launcher of launchers) {
    it(`through ${launcher.name}`, { skip: launcher.skip }, async () => {
      const [command, args] = launcher.command();
      const started = launch(command, args, { SVC_BASE_URL: server.url, SVC_API_KEY: key, XDG_CONFIG_HOME: '/nonexistent' });
      await until('tail to start', () => started.output().includes('Following'), 30_000).catch((error: Error) =>
        assert.fail(`${error.message}\n${started.output()}`),
      );
      const tree = descendants(started.child.pid!);
      // A terminal's Ctrl-C: SIGINT to the whole foreground process group.
      process.kill(-started.child.pid!, 'SIGINT');
      assert.equal(await started.exited, 0, started.output());
      await until('every process to be gone', () => tree.every((pid) => !alive(pid)));
    });
  }
});
