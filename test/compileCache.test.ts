import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// svc turns on Node's compile cache (bin/svc.js for every command, src/main.ts for what `serve`
// and `migrate` load), in os.tmpdir()/node-compile-cache unless Node's own variables say otherwise.

const BIN = fileURLToPath(new URL('../bin/svc.js', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const run = promisify(execFile);

/** Files under `folder`, at any depth. */
function filesUnder(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);
}

describe('the compile cache', () => {
  const folders: string[] = [];
  const freshTmp = () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-compile-cache-'));
    folders.push(folder);
    return folder;
  };
  // The suite's own cache (package.json sets NODE_COMPILE_CACHE) is not what is tested here.
  const env = (tmp: string, extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? '', HOME: tmp, TMPDIR: tmp, ...extra });
  after(() => {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  it('is kept in the temporary folder by the svc command', async () => {
    const tmp = freshTmp();
    await run(process.execPath, [BIN, '--help'], { env: env(tmp) });
    assert.ok(filesUnder(join(tmp, 'node-compile-cache')).length > 10, 'the CLI modules were cached');
  });

  it('covers the service modules that `node src/main.ts` loads (npm start)', async () => {
    const tmp = freshTmp();
    await run(process.execPath, [MAIN, 'migrate'], { env: env(tmp, { SVC_DATABASE_URL: `sqlite:${join(tmp, 'svc.db')}`, SVC_LOG_LEVEL: 'silent' }) });
    assert.ok(filesUnder(join(tmp, 'node-compile-cache')).length > 10, 'the service modules were cached');
  });

  it("is off with NODE_DISABLE_COMPILE_CACHE=1, and goes where NODE_COMPILE_CACHE says", async () => {
    const tmp = freshTmp();
    await run(process.execPath, [BIN, '--help'], { env: env(tmp, { NODE_DISABLE_COMPILE_CACHE: '1' }) });
    assert.deepEqual(filesUnder(join(tmp, 'node-compile-cache')), []);
    await run(process.execPath, [BIN, '--help'], { env: env(tmp, { NODE_COMPILE_CACHE: join(tmp, 'elsewhere') }) });
    assert.deepEqual(filesUnder(join(tmp, 'node-compile-cache')), []);
    assert.ok(filesUnder(join(tmp, 'elsewhere')).length > 10);
  });
});
