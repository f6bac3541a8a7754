import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

// The CLI as a user outside the repository gets it: built and packed (`npm run cli:pack` does the
// same two steps), installed globally from the tarball, offline, into a prefix of its own, and
// run as plain `svc` from PATH, on the machine's own Node (20 here, when it has one), against a
// live svc.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SYSTEM_PATH = ['/usr/local/bin', '/usr/bin', '/bin'].join(':');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end without blocking this process (the svc under test runs in it). */
async function run(command: string, args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Ran> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = await once(child, 'exit');
  return { code: code as number | null, stdout, stderr };
}

async function ok(command: string, args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<string> {
  const result = await run(command, args, options);
  assert.equal(result.code, 0, `${command} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

describe('the svc CLI, installed from its tarball outside the repository', () => {
  let server: TestServer;
  let folder: string;
  before(async () => {
    server = await startTestServer('sqlite');
    folder = mkdtempSync(join(tmpdir(), 'svc-cli-install-'));
  });
  after(async () => {
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('puts `svc` on PATH, which works on the machine’s Node with no dependency to fetch', async () => {
    await ok(process.execPath, [join(ROOT, 'src/cli/standalone/build.ts')], { cwd: ROOT });
    const packed = await ok('npm', ['pack', '--json', './dist/cli', '--pack-destination', folder], { cwd: ROOT });
    const [{ filename, files }] = JSON.parse(packed.slice(packed.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
    assert.ok(files.some((file) => file.path === 'bin/svc.js'));
    assert.deepEqual(files.filter((file) => file.path.endsWith('.ts')), [], 'no TypeScript ships');

    const prefix = join(folder, 'global');
    await ok('npm', ['install', '--global', '--offline', '--no-audit', '--no-fund', '--prefix', prefix, join(folder, filename)], { cwd: folder });
    const installed = JSON.parse(readFileSync(join(prefix, 'lib/node_modules/svc-cli/package.json'), 'utf8'));
    assert.equal(installed.dependencies, undefined);
    assert.ok(existsSync(join(prefix, 'bin/svc')));

    // A user's shell: the installed svc first on PATH, then the system (its own Node), in a
    // folder of theirs, with a home of their own.
    const home = join(folder, 'home');
    const env = { PATH: `${join(prefix, 'bin')}:${SYSTEM_PATH}`, HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
    assert.equal((await ok('svc', ['--version'], { cwd: folder, env })).trim(), version);

    const created = JSON.parse(
      await ok('svc', ['projects', 'create', '--name', 'Installed Co', '--owner-email', 'ops@example.com', '--base-url', server.url, '--login', '--json'], { cwd: folder, env }),
    );
    assert.match(created.apiKey, /^svc_live_/);
    const keys = JSON.parse(await ok('svc', ['keys', 'list', '--json'], { cwd: folder, env }));
    assert.equal(keys.length, 1);
    const refused = await run('svc', ['messages', 'get', 'msg_0000000000000000000000000', '--json'], { cwd: folder, env });
    assert.equal(refused.code, 1, refused.stderr);

    // Ctrl-C on tail: the process group gets SIGINT, as from a terminal; exit 0.
    const tail = spawn('svc', ['messages', 'tail', '--interval', '100ms'], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    tail.stderr.on('data', (chunk) => (output += chunk));
    tail.stdout.on('data', (chunk) => (output += chunk));
    const exited = once(tail, 'exit');
    await until('tail to start', () => output.includes('Following'), 30_000);
    process.kill(-tail.pid!, 'SIGINT');
    const [code] = await exited;
    assert.equal(code, 0, output);
  });
});
