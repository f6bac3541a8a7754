// The benchmark harness: runs the chosen scenarios' targets interleaved (for each run, every
// target once), prints Markdown tables of medians, min–max and ratios, and writes the raw results
// to bench/results/. Every process it measures is a child process on 127.0.0.1.
//
//   npm run bench -- [--runs 3] [--only accept,pacing] [--quick] [--svc-dir PATH] [--window 30]
//
// With SVC_TEST_POSTGRES_URL set, PostgreSQL targets run too.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type DatabaseKind, dropBenchDatabases } from './databases.ts';
import { stopAll } from './processes.ts';
import { scenarioReport, type TargetRuns } from './report.ts';
import type { BenchContext, Scenario } from './scenario.ts';
import { accept } from './scenarios/accept.ts';
import { dispatchThroughput } from './scenarios/dispatch.ts';
import { pacing } from './scenarios/pacing.ts';
import { reads } from './scenarios/reads.ts';
import { scale, scaleSettings } from './scenarios/scale.ts';
import { webhooks } from './scenarios/webhooks.ts';

const SCENARIOS: Scenario[] = [accept, dispatchThroughput, pacing, webhooks, reads, scale];
const benchDir = dirname(fileURLToPath(import.meta.url));

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'svc-dir': { type: 'string', default: resolve(benchDir, '..') },
    window: { type: 'string', default: '30' },
    targets: { type: 'string' },
    // scale: the largest size, its projects, the sizes on the ladder and the factor between them, the purged day's cap.
    'scale-messages': { type: 'string' },
    'scale-projects': { type: 'string' },
    'scale-steps': { type: 'string' },
    'scale-factor': { type: 'string' },
    'scale-purge-messages': { type: 'string' },
    'scale-settle-s': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  console.log(`npm run bench -- [--runs N] [--only ${SCENARIOS.map((s) => s.name).join(',')}] [--quick] [--svc-dir PATH] [--window S] [--targets a,b]
  [--scale-messages 300000] [--scale-projects 3000] [--scale-steps 3] [--scale-factor 10] [--scale-purge-messages 100000] [--scale-settle-s 900]`);
  process.exit(0);
}

const runs = Number(values.runs);
scaleSettings.given = {
  messages: values['scale-messages'],
  projects: values['scale-projects'],
  steps: values['scale-steps'],
  factor: values['scale-factor'],
  purgeCap: values['scale-purge-messages'],
  settleS: values['scale-settle-s'],
};
const chosen = values.only ? values.only.split(',').map((name) => name.trim()) : SCENARIOS.map((scenario) => scenario.name);
for (const name of chosen) {
  if (!SCENARIOS.some((scenario) => scenario.name === name)) throw new Error(`unknown scenario ${name}`);
}
const scenarios = SCENARIOS.filter((scenario) => chosen.includes(scenario.name));
const postgresUrl = process.env.SVC_TEST_POSTGRES_URL || undefined;
const databases: DatabaseKind[] = postgresUrl ? ['sqlite', 'postgres'] : ['sqlite'];
const svcDir = resolve(values['svc-dir']);
const started = new Date();

const context: BenchContext = {
  svcDir,
  benchDir,
  quick: values.quick,
  windowS: values.quick ? Math.min(Number(values.window), 5) : Number(values.window),
  postgresUrl,
  databases,
  log: (message) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${message}`),
};

function describeCheckout(dir: string): string {
  try {
    const commit = execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim();
    return `${commit}${dirty ? ' (with uncommitted changes in src/)' : ''}`;
  } catch {
    return 'unknown commit';
  }
}

const onlyTargets = values.targets?.split(',').map((name) => name.trim());
const plan = scenarios.map((scenario) => ({
  scenario,
  targets: scenario.targets(context).filter((target) => !onlyTargets || onlyTargets.includes(target.name)),
}));
const results = new Map(
  plan.map(({ scenario, targets }) => [
    scenario.name,
    targets.map((target): TargetRuns => ({ target: target.name, runs: [], errors: [] })),
  ]),
);

context.log(`svc: ${svcDir} — ${describeCheckout(svcDir)}; databases: ${databases.join(', ')}; runs: ${runs}${context.quick ? ' (quick)' : ''}`);
try {
  for (let run = 1; run <= runs; run++) {
    for (const { scenario, targets } of plan) {
      for (const [index, target] of targets.entries()) {
        const record = results.get(scenario.name)![index]!;
        context.log(`run ${run}/${runs} ${scenario.name} ${target.name}`);
        try {
          const measurement = await target.run(context);
          record.runs.push(measurement);
          context.log(`  ${JSON.stringify(measurement.figures, (_key, value) => (typeof value === 'number' ? Math.round(value * 1000) / 1000 : value))}`);
        } catch (error) {
          record.runs.push(undefined);
          record.errors.push(`run ${run}: ${(error as Error).stack ?? error}`);
          context.log(`  FAILED: ${(error as Error).stack ?? error}`);
        } finally {
          // Whatever the target left running (it failed half-way, say) goes before the next one.
          await stopAll();
        }
      }
    }
  }
} finally {
  await stopAll();
  await dropBenchDatabases(postgresUrl).catch((error) => context.log(`cleanup: ${error}`));
}

const header = [
  `## Results ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  '',
  `svc: \`${describeCheckout(svcDir)}\`; ${runs} interleaved run(s)${context.quick ? ', quick mode' : ''}; ` +
    `databases: ${databases.join(', ')}; load average at the end: ${loadavg().map((n) => n.toFixed(2)).join(' ')}.`,
  '',
].join('\n');
const sections = plan.map(({ scenario }) =>
  [scenarioReport(scenario, results.get(scenario.name)!, scenario.ratios(context)), scenario.extraReport?.(context, results.get(scenario.name)!)]
    .filter(Boolean)
    .join('\n\n'),
);
console.log([header, ...sections].join('\n\n'));

const resultsDir = join(benchDir, 'results');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `${started.toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(
  file,
  JSON.stringify(
    {
      started: started.toISOString(),
      svcDir,
      svcCommit: describeCheckout(svcDir),
      runs,
      quick: context.quick,
      windowS: context.windowS,
      databases,
      results: Object.fromEntries(results),
    },
    null,
    1,
  ),
);
context.log(`raw results: ${file}`);
// A target that failed in any run fails the command (the tables still show the other runs).
const failures = [...results.values()].flat().reduce((sum, target) => sum + target.errors.length, 0);
if (failures > 0) context.log(`${failures} target run(s) failed`);
process.exit(failures > 0 ? 1 : 0);
