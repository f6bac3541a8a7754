import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// npm run build (in sdk/; `npm pack` runs it first): the SDK as a package anyone can install.
//   dist/esm/index.js   ES module, openapi-fetch bundled in: no runtime dependency to fetch
//   dist/cjs/index.js   the same for require() (dist/cjs/package.json says "commonjs")
//   dist/*/…d.ts        declarations from tsc, `.ts` specifiers made `.js`, openapi-fetch's own
//                       declarations (MIT) copied in under vendor/ so that the types are whole
// Target ES2022: Node 20 and every current browser; only fetch and Web Crypto are used.

const SDK = fileURLToPath(new URL('..', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIST = `${SDK}dist`;
const require = (name: string) => fileURLToPath(import.meta.resolve(name, `file://${SDK}`));

rmSync(DIST, { recursive: true, force: true });

for (const [format, folder] of [['esm', 'esm'], ['cjs', 'cjs']] as const) {
  await build({
    entryPoints: [`${SDK}src/index.ts`],
    outfile: `${DIST}/${folder}/index.js`,
    bundle: true,
    format,
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['import'],
    target: 'es2022',
    legalComments: 'inline',
    logLevel: 'warning',
  });
}
writeFileSync(`${DIST}/cjs/package.json`, '{ "type": "commonjs" }\n');

// Declarations, once, then the same files for both formats.
const types = `${DIST}/types`;
execFileSync(
  process.execPath,
  [
    `${ROOT}node_modules/typescript/bin/tsc`,
    '-p', `${SDK}tsconfig.json`,
    '--noEmit', 'false', '--declaration', '--emitDeclarationOnly', '--outDir', types,
  ],
  { stdio: 'inherit' },
);

function localSpecifiers(text: string): string {
  return text
    .replace(/(from\s+|import\()(['"])(\.{1,2}\/[^'"]+)\.ts\2/g, '$1$2$3.js$2')
    .replace(/(['"])openapi-fetch\1/g, '$1./vendor/openapi-fetch.js$1')
    .replace(/(['"])openapi-typescript-helpers\1/g, '$1./vendor/openapi-typescript-helpers.js$1');
}

const vendor = {
  'openapi-fetch': fileURLToPath(new URL('index.d.ts', `file://${require('openapi-fetch')}`)),
  'openapi-typescript-helpers': fileURLToPath(new URL('index.d.ts', `file://${require('openapi-typescript-helpers')}`)),
};
for (const folder of ['esm', 'cjs']) {
  mkdirSync(`${DIST}/${folder}/vendor`, { recursive: true });
  for (const file of readdirSync(types)) {
    writeFileSync(`${DIST}/${folder}/${file}`, localSpecifiers(readFileSync(`${types}/${file}`, 'utf8')));
  }
  for (const [name, path] of Object.entries(vendor)) {
    const text = readFileSync(path, 'utf8').replace(/(['"])openapi-typescript-helpers\1/g, '$1./openapi-typescript-helpers.js$1');
    writeFileSync(`${DIST}/${folder}/vendor/${name}.d.ts`, `// ${name} (MIT License, https://github.com/openapi-ts/openapi-typescript)\n${text}`);
  }
}
rmSync(types, { recursive: true });
cpSync(`${ROOT}node_modules/openapi-fetch/LICENSE`, `${DIST}/THIRD-PARTY-LICENSE-openapi-fetch`);
console.log(`built ${DIST}`);
