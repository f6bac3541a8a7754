import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runSvc } from './support/process.ts';

// The README is read in a clone of this repository and nothing else: every file it links is in
// the repository, and it shows no way of starting svc that can reach npm's unrelated public
// `svc` package (`npx svc` outside the checkout downloads that one).

const ROOT = new URL('../', import.meta.url);
const README = readFileSync(new URL('README.md', ROOT), 'utf8');

describe('the README stands alone in a clone', () => {
  it('links only files that the repository holds', () => {
    const links = [...README.matchAll(/\]\(([^)#\s]+)[^)]*\)/g)].map((match) => match[1]!).filter((link) => !/^[a-z]+:/i.test(link));
    assert.ok(links.length > 0);
    for (const link of links) {
      assert.ok(!link.startsWith('..'), `${link} leaves the repository`);
      assert.ok(existsSync(fileURLToPath(new URL(link, ROOT))), `${link} is not in the repository`);
    }
    assert.doesNotMatch(README, /\.\.\/shared/);
  });

  it('never shows `npx svc` as a way to run svc', () => {
    const commands = README.split('\n').filter((line) => /^\s*(\$ )?npx svc\b/.test(line) || /`npx svc [^`]/.test(line));
    assert.deepEqual(commands, []);
  });

  it('`svc --version` prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version: string };
    const result = await runSvc(['--version'], {});
    assert.equal(result.code, 0, result.output);
    assert.equal(result.output.trim(), version);
  });
});
