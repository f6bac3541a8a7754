#!/usr/bin/env node
// The `svc` command. Node 24 runs the TypeScript sources directly (type stripping). Started by an
// older `node` (the first one on PATH, e.g. a system Node 20), it runs itself again on the Node 24
// the repo pins (node_modules/node, installed by `npm install`), passing signals and the exit code.
// Plain JavaScript that any Node can parse, so that an old one gets this far.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major > 24 || (major === 24 && minor >= 15)) {
  await import('../src/main.ts');
} else {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    console.error(`svc: needs Node.js 24.15 or later, and this is ${process.version}: run \`npm install\`, then \`npx svc\``);
    process.exit(1);
  }
  const child = spawn(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' ? 130 : 1)));
}
