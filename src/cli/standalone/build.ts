import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// npm run cli:pack builds this, then packs it: the `svc` command as a package of its own, for
// `npm install -g ./svc-cli-<version>.tgz`. One JavaScript file (commander and the SDK bundled
// in, no dependencies to fetch) that runs on Node 20+; written to dist/cli/.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const OUT = `${ROOT}dist/cli`;
const { version } = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string };

rmSync(OUT, { recursive: true, force: true });
mkdirSync(`${OUT}/bin`, { recursive: true });
await build({
  entryPoints: [`${ROOT}src/cli/standalone/entry.ts`],
  outfile: `${OUT}/bin/svc.js`,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  define: { SVC_VERSION: JSON.stringify(version) },
  // commander is CommonJS: its require() of Node's modules needs a real require in an ES module.
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as svcCreateRequire } from 'node:module';\nconst require = svcCreateRequire(import.meta.url);" },
  legalComments: 'inline',
  logLevel: 'warning',
});
chmodSync(`${OUT}/bin/svc.js`, 0o755);
writeFileSync(
  `${OUT}/package.json`,
  `${JSON.stringify(
    {
      name: 'svc-cli',
      version,
      private: true,
      description: 'The svc command: the svc API from the command line (client commands).',
      type: 'module',
      license: 'UNLICENSED',
      bin: { svc: 'bin/svc.js' },
      engines: { node: '>=20' },
    },
    null,
    2,
  )}\n`,
);
writeFileSync(
  `${OUT}/README.md`,
  `# svc-cli\n\nThe \`svc\` command of svc, client commands only (\`svc --help\`). Install: \`npm install -g ./svc-cli-${version}.tgz\`.\nRunning the service itself (\`serve\`, \`migrate\`) needs a checkout of svc: see its README.\n`,
);
copyFileSync(`${ROOT}node_modules/commander/LICENSE`, `${OUT}/THIRD-PARTY-LICENSE-commander`);
console.log(`built ${OUT}`);
