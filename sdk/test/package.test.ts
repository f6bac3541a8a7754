import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../test/support/server.ts';

// The SDK as a customer gets it: `npm pack` in sdk/ builds and packs it; the tarball is installed,
// offline, into an empty project outside this repository; a script is type-checked there with the
// settings `tsc --init` writes, compiled, and run against a live svc on the machine's own Node
// (20 here, when it has one), as an ES module and through require().

const SDK = fileURLToPath(new URL('..', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

/** The machine's own Node when older than the pinned one: the SDK promises Node 20. */
function customerNode(): string {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (existsSync(candidate)) return candidate;
  }
  return process.execPath;
}

/** Runs a command to its end without blocking this process (the svc under test runs in it). */
async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, `${command} ${args.join(' ')}\n${stdout}\n${stderr}`);
  return stdout;
}

// The README's example, as a customer would write it.
const CUSTOMER_SCRIPT = `import process from 'node:process';
import { createSvcClient, SvcError, unwrap, signWebhook, verifyWebhook, type Message } from '@svc/sdk';

const svc = createSvcClient({ baseUrl: process.env.SVC_BASE_URL ?? 'http://127.0.0.1:8080', apiKey: process.env.SVC_API_KEY });
const project = await unwrap(svc.GET('/v1/projects/me'));
const failed: Message[] = [];
for await (const message of svc.paginate('/v1/messages', { query: { status: 'FAILED' } })) failed.push(message);
let missing = '';
try {
  await unwrap(svc.GET('/v1/messages/{id}', { params: { path: { id: 'msg_0000000000000000000000000' } } }));
} catch (error) {
  if (error instanceof SvcError) missing = \`\${error.status} \${error.code}\`;
}
const secret = 'whsec_' + btoa('0123456789abcdef0123456789abcdef');
const payload = JSON.stringify({ event: 'message.sent', message_id: 'msg_1' });
const timestamp = Math.floor(Date.now() / 1000);
const signature = await signWebhook({ secret, id: 'evt_1', timestamp, payload });
const event = await verifyWebhook({ payload, secret, headers: { 'webhook-id': 'evt_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature } });
console.log(JSON.stringify({ name: project.name, failed: failed.length, missing, verified: event.event, node: process.version }));
`;

// CommonJS, type-checked (with verbatimModuleSyntax, as tsc --init sets it) and run.
const CJS_CHECK = `import sdk = require('@svc/sdk');
const client: sdk.SvcClient = sdk.createSvcClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: undefined });
export = client;
`;
const CJS_SCRIPT = `const { createSvcClient, unwrap } = require('@svc/sdk');
const svc = createSvcClient({ baseUrl: process.env.SVC_BASE_URL, apiKey: process.env.SVC_API_KEY });
unwrap(svc.GET('/v1/projects/me')).then((project) => console.log('cjs ' + project.name));
`;

describe('the SDK package, installed from its tarball outside the repository', () => {
  let server: TestServer;
  let key: string;
  let folder: string;
  before(async () => {
    server = await startTestServer('sqlite');
    key = (await server.createProject('Tarball Shop')).key;
    folder = mkdtempSync(join(tmpdir(), 'svc-sdk-customer-'));
  });
  after(async () => {
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('packs, installs offline, type-checks with tsc --init settings and runs on Node 20+', async () => {
    // npm pack runs the build (prepack): JavaScript and declarations only.
    const packed = await run('npm', ['pack', '--json', '--pack-destination', folder], SDK);
    const [{ filename, files }] = JSON.parse(packed.slice(packed.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
    const paths = files.map((file) => file.path);
    assert.ok(paths.includes('dist/esm/index.js') && paths.includes('dist/cjs/index.js') && paths.includes('dist/esm/index.d.ts'));
    assert.deepEqual(paths.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts')), [], 'no TypeScript sources ship');
    for (const path of paths.filter((candidate) => candidate.endsWith('.d.ts'))) {
      const text = readFileSync(join(SDK, path), 'utf8');
      assert.doesNotMatch(text, /from\s+['"][^'"]+\.ts['"]/, `${path} imports a .ts file`);
      assert.doesNotMatch(text, /from\s+['"]openapi-(fetch|typescript-helpers)['"]/, `${path} needs a package it does not bring`);
    }

    const project = join(folder, 'customer');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'customer', private: true, type: 'module' }));
    // Offline: the package has no dependencies to fetch.
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(folder, filename)], project);
    const installed = JSON.parse(readFileSync(join(project, 'node_modules/@svc/sdk/package.json'), 'utf8'));
    assert.equal(installed.dependencies, undefined);

    // tsc --init's settings (module nodenext, strict, exactOptionalPropertyTypes, verbatimModuleSyntax…)
    // with the one change TypeScript asks for before `process` can be used: Node's types.
    await run(process.execPath, [TSC, '--init'], project);
    const tsconfig = join(project, 'tsconfig.json');
    const settings = readFileSync(tsconfig, 'utf8');
    assert.match(settings, /"exactOptionalPropertyTypes": true/);
    writeFileSync(tsconfig, settings.replace('"types": []', '"types": ["node"]'));
    // @types/node, as `npm install -D @types/node` would put it (copied: the test runs offline).
    for (const name of ['@types/node', 'undici-types']) cpSync(join(ROOT, 'node_modules', name), join(project, 'node_modules', name), { recursive: true });
    writeFileSync(join(project, 'customer.ts'), CUSTOMER_SCRIPT);
    writeFileSync(join(project, 'check.cts'), CJS_CHECK);
    writeFileSync(join(project, 'plain.cjs'), CJS_SCRIPT);
    await run(process.execPath, [TSC, '-p', '.'], project);

    const node = customerNode();
    const env = { SVC_BASE_URL: server.url, SVC_API_KEY: key };
    const output = JSON.parse((await run(node, ['customer.js'], project, env)).trim());
    assert.deepEqual(
      { ...output, node: undefined },
      { name: 'Tarball Shop', failed: 0, missing: '404 not_found', verified: 'message.sent', node: undefined },
    );
    assert.equal(output.node, execFileSync(node, ['--version'], { encoding: 'utf8' }).trim());
    assert.equal((await run(node, ['plain.cjs'], project, env)).trim(), 'cjs Tarball Shop');
  });
});
