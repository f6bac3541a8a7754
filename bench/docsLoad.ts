// How fast /docs (the API reference) loads in Chromium, for one or more checkouts of svc measured
// in the same run, interleaved (run 1: every checkout, run 2: every checkout, …). For each: a
// fresh svc process; its first page view (the server renders or loads the reference then), and
// views with a cold browser cache on the warm server. Each view is a new browser context (no
// cache, no storage) and records the time to the first operation title ("Create a project"
// visible), to the load event, the browser's main-thread CPU (CDP TaskDuration), the requests
// and the bytes transferred. The machine's load average is printed with the results.
//
//   node bench/docsLoad.ts [--runs 5] [--views 3] [--checkout after=.] [--checkout before=/work/wt-hdocs-before]
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type Browser, chromium } from 'playwright-core';
import { dropBenchDatabases, freshDatabase } from './databases.ts';
import { stopAll } from './processes.ts';
import { startSvc } from './svc.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    views: { type: 'string', default: '3' },
    checkout: { type: 'string', multiple: true },
    chromium: { type: 'string', default: process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log('node bench/docsLoad.ts [--runs N] [--views N] [--checkout name=PATH]… [--chromium PATH]');
  process.exit(0);
}

const checkouts = (values.checkout ?? [`this=${resolve(benchDir, '..')}`]).map((spec) => {
  const [name, path] = spec.includes('=') ? [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)] : [spec, spec];
  return { name: name!, dir: resolve(path!) };
});

interface View {
  titleMs: number;
  loadMs: number;
  cpuMs: number;
  requests: number;
  bytes: number;
}

const TITLE_WATCH = `(() => {
  const TEXT = 'Create a project';
  const has = (node) => node.nodeType === 1 && node.textContent.includes(TEXT) &&
    [node, ...node.querySelectorAll('*')].some((element) => element.textContent.trim() === TEXT);
  const observer = new MutationObserver((records) => {
    if (!records.some((record) => [...record.addedNodes].some(has))) return;
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => { window.__firstTitleMs = performance.now(); }));
  });
  observer.observe(document, { childList: true, subtree: true });
})();`;

async function view(browser: Browser, url: string): Promise<View> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const sizes: Promise<number>[] = [];
  page.on('requestfinished', (request) => sizes.push(request.sizes().then((size) => size.responseBodySize + size.responseHeadersSize)));
  // The first title's time by the page's own clock (from navigation start): when an element
  // reading "Create a project" is in the document, plus the frame that paints it. Timed inside
  // the browser, so the harness's own polling (slow on a loaded machine) is not counted.
  await page.addInitScript(TITLE_WATCH);
  await page.goto(url, { waitUntil: 'commit' });
  await page.getByText('Create a project', { exact: true }).first().waitFor({ state: 'visible' });
  await page.waitForFunction('typeof window.__firstTitleMs === "number"');
  const titleMs = Number(await page.evaluate('window.__firstTitleMs'));
  await page.waitForLoadState('load');
  await page.waitForLoadState('networkidle');
  const loadMs = Number(await page.evaluate('(() => { const [nav] = performance.getEntriesByType("navigation"); return nav.loadEventEnd - nav.startTime; })()'));
  const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
  const cpuMs = (metrics.find((metric) => metric.name === 'TaskDuration')?.value ?? 0) * 1000;
  const bytes = (await Promise.all(sizes)).reduce((sum, size) => sum + size, 0);
  await context.close();
  return { titleMs, loadMs, cpuMs, requests: sizes.length, bytes };
}

const median = (numbers: number[]) => {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const load = () => loadavg().map((value) => value.toFixed(2)).join(' ');

const results = new Map(checkouts.map((checkout) => [checkout.name, { first: [] as View[], warm: [] as View[] }]));
const loadBefore = load();
const browser = await chromium.launch({ executablePath: values.chromium });
try {
  for (let run = 1; run <= Number(values.runs); run++) {
    for (const checkout of checkouts) {
      const database = await freshDatabase('sqlite', undefined);
      const svc = await startSvc(checkout.dir, { SVC_DATABASE_URL: database.url }, 'api');
      try {
        const url = `${svc.url}/docs/`;
        const entry = results.get(checkout.name)!;
        entry.first.push(await view(browser, url));
        for (let i = 0; i < Number(values.views); i++) entry.warm.push(await view(browser, url));
        console.error(`run ${run} ${checkout.name}: first ${Math.round(entry.first.at(-1)!.titleMs)} ms, warm ${Math.round(entry.warm.at(-1)!.titleMs)} ms`);
      } finally {
        await svc.child.stop();
      }
    }
  }
} finally {
  await browser.close();
  await stopAll();
  await dropBenchDatabases(undefined);
}

const row = (name: string, kind: string, views: View[]) =>
  `| ${name} | ${kind} | ${Math.round(median(views.map((v) => v.titleMs)))} (${Math.round(Math.min(...views.map((v) => v.titleMs)))}–${Math.round(Math.max(...views.map((v) => v.titleMs)))}) | ${Math.round(median(views.map((v) => v.loadMs)))} | ${Math.round(median(views.map((v) => v.cpuMs)))} | ${median(views.map((v) => v.requests))} | ${Math.round(median(views.map((v) => v.bytes)) / 1024)} |`;
console.log(`/docs in Chromium, ${values.runs} runs × (first view + ${values.views} cold-cache views); medians (min–max); load average ${loadBefore} before, ${load()} after.\n`);
console.log('| checkout | view | first operation title, ms | load event, ms | browser CPU, ms | requests | KiB transferred |');
console.log('|---|---|---|---|---|---|---|');
for (const [name, entry] of results) {
  console.log(row(name, 'first after start', entry.first));
  console.log(row(name, 'cold cache, warm server', entry.warm));
}
if (checkouts.length === 2) {
  const [a, b] = [...results.values()];
  const ratio = (pick: (v: View) => number) => (median(b!.warm.map(pick)) / median(a!.warm.map(pick))).toFixed(1);
  console.log(`\n${checkouts[1]!.name} / ${checkouts[0]!.name} (cold cache, warm server): title ×${ratio((v) => v.titleMs)}, load ×${ratio((v) => v.loadMs)}, CPU ×${ratio((v) => v.cpuMs)}.`);
}
