import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { servedOpenApiDocument } from '../../src/http/openapi/servedDocument.ts';
import { runSvc } from '../support/process.ts';

// The SDK and CLI samples beside each operation in /docs (x-codeSamples, from
// src/http/openapi/codeSamples.ts) work as written: every SDK sample type-checks against the SDK,
// and every CLI sample names a real command with options that command has.

type Json = Record<string, any>;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

const operations: { at: string; path: string; operation: Json }[] = [];
before(async () => {
  const document = await servedOpenApiDocument();
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const method of METHODS) if (item[method]) operations.push({ at: `${method.toUpperCase()} ${path}`, path, operation: item[method] });
  }
});

const samplesOf = (operation: Json, label: string): string[] =>
  ((operation['x-codeSamples'] ?? []) as { label: string; source: string }[]).filter((sample) => sample.label.startsWith(label)).map((sample) => sample.source);

describe('the code samples of the API reference', () => {
  it('every /v1 operation has an SDK sample, and the main ones a CLI sample', () => {
    const withoutSdk = operations.filter(({ path, operation }) => path.startsWith('/v1/') && samplesOf(operation, 'SDK').length !== 1);
    assert.deepEqual(withoutSdk.map(({ at }) => at), []);
    for (const id of ['sendMessage', 'listMessages', 'createTemplate', 'createWebhookEndpoint', 'rotateWebhookSecret', 'sendMessageBatch']) {
      const entry = operations.find(({ operation }) => operation.operationId === id)!;
      assert.equal(samplesOf(entry.operation, 'CLI').length, 1, `${id}: no CLI sample`);
    }
  });

  it('every SDK sample type-checks against the SDK', { timeout: 120_000 }, async () => {
    const folder = mkdtempSync(join(ROOT, '.code-samples-'));
    try {
      let count = 0;
      for (const { operation } of operations) {
        for (const source of samplesOf(operation, 'SDK')) writeFileSync(join(folder, `${operation.operationId}-${count++}.ts`), source);
      }
      assert.ok(count >= 40, `only ${count} SDK samples`);
      writeFileSync(
        join(folder, 'tsconfig.json'),
        JSON.stringify({
          extends: '../tsconfig.json',
          compilerOptions: { noEmit: true, noUnusedLocals: true, paths: { '@svc/sdk': ['../sdk/src/index.ts'] } },
          include: ['*.ts'],
        }),
      );
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const result = await promisify(execFile)(process.execPath, [tsc, '-p', folder]).catch((error: { stdout: string; stderr: string }) => error);
      assert.equal(result.stdout + result.stderr, '', 'SDK samples do not type-check');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('every CLI sample is a real command with real options', { timeout: 120_000 }, async () => {
    const samples = operations.flatMap(({ at, operation }) => samplesOf(operation, 'CLI').map((source) => ({ at, source })));
    assert.ok(samples.length >= 25, `only ${samples.length} CLI samples`);
    const problems: string[] = [];
    for (const { at, source } of samples) {
      // One command line: continuation lines joined, the `… |` before svc and a trailing # comment dropped.
      const line = source.replace(/\\\n\s*/g, '').replace(/\s+#\s.*$/, '');
      const words = line.slice(line.indexOf('svc ') + 4).match(/"[^"]*"|\S+/g)!;
      const path: string[] = [];
      for (const word of words) {
        if (!/^[a-z][a-z-]*$/.test(word)) break; // a command name, e.g. marketing-messages
        path.push(word);
      }
      // A lowercase argument (`set fallback`) is not a command: the longest prefix that is.
      const isCommand = (answer: { code: number; output: string }) => answer.code === 0 && answer.output.startsWith(`Usage: svc ${path.join(' ')} `);
      let help = await runSvc([...path, '--help'], {});
      while (path.length > 1 && !isCommand(help)) {
        path.pop();
        help = await runSvc([...path, '--help'], {});
      }
      if (!isCommand(help)) {
        problems.push(`${at}: "svc ${path.join(' ')}" is not a command`);
        continue;
      }
      for (const option of words.filter((word) => word.startsWith('-'))) {
        const name = option.split('=')[0]!;
        if (!new RegExp(`(^|[\\s,])${name}([\\s,]|$)`, 'm').test(help.output)) problems.push(`${at}: svc ${path.join(' ')} has no ${name}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
