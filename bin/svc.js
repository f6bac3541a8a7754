#!/usr/bin/env node
// The `svc` command. Node 24 runs the TypeScript sources directly (type stripping). Started by an
// older `node` (the first one on PATH, e.g. a system Node 20), it runs itself again on the Node 24
// the repo pins (node_modules/node, installed by `npm install`), passing signals and the exit code.
// Plain JavaScript that any Node can parse, so that an old one gets this far.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import { constants } from 'node:os';
import { clearInterval, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major > 24 || (major === 24 && minor >= 15)) {
  // Compiled modules kept on disk for the next start (see src/main.ts), main.ts's own imports included.
  module.enableCompileCache();
  await import('../src/main.ts');
} else {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    console.error(`svc: needs Node.js 24.15 or later, and this is ${process.version}: run \`npm install\` in svc's folder, or put Node 24 first on PATH`);
    process.exit(1);
  }
  const child = spawn(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  // Ctrl-C in a terminal reaches both processes (one process group); a signal sent to this one
  // alone (a process manager's SIGTERM) is passed on. The child decides the exit code either way.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
  // Left by our own launcher (a shell that died of SIGTERM without passing it on), stop the child
  // as that launcher was asked to: svc never outlives what started it.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }, 500);
  watch.unref();
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
}
