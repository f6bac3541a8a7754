import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { servedOpenApiDocument } from '../../src/http/openapi/servedDocument.ts';

// Redocly's recommended rules on the served document: no errors and no warnings. Offline: no
// telemetry, no update check.

const cli = join(createRequire(import.meta.url).resolve('@redocly/cli/package.json'), '..', 'bin', 'cli.js');

test('redocly lint (recommended) finds nothing in the served document', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'svc-redocly-'));
  try {
    const file = join(folder, 'openapi.json');
    writeFileSync(file, JSON.stringify(await servedOpenApiDocument(), null, 2));
    const run = await promisify(execFile)(process.execPath, [cli, 'lint', '--extends=recommended', '--format=json', file], {
      cwd: folder,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }));
    const report = JSON.parse(run.stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
    const problems = report.problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`);
    assert.deepEqual(problems, [], `redocly lint:\n${problems.join('\n')}`);
    assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
