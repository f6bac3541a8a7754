// scale (issue 19): one svc database grown through svc's public API — projects created, credentials
// and a webhook endpoint saved, a template registered and approved, messages sent one
// POST /v1/messages at a time with 64 in flight and walked to READ by the sandbox, each with its three
// webhooks delivered to a fast receiver — up a geometric ladder of sizes (e.g. 3,000 / 30,000 /
// 300,000 messages over 30 / 300 / 3,000 projects). At each size the figures of issue 19's table are
// measured, and the report gives each as a ratio to the smallest size. svc is one `serve` process;
// the load generators (autocannon, the senders' fetches) and the receivers run in other processes.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sizes } from '../bytesPerMessage.ts';
import { type BenchDatabase, countWhere, type DatabaseKind, freshDatabase } from '../databases.ts';
import type { LoadResult } from '../load.ts';
import { io, spawnNode, sleep, startBareJson, waitUntil } from '../processes.ts';
import { measurePurgeUnderLoad } from '../purgeUnderLoad.ts';
import { receivedTotal } from '../receiverCounts.ts';
import { median, type TargetRuns } from '../report.ts';
import type { BenchContext, Measurement, Scenario, Target } from '../scenario.ts';
import { call, createSender, messageBody, type Sender, startSvc } from '../svc.ts';

const CONNECTIONS = 64;
const RECEIVERS = 10;
const EVENTS_PER_MESSAGE = 3;

export interface ScaleOptions {
  /** The largest size, in messages. */
  messages: number;
  /** Projects at the largest size; each smaller size has the same share of them. */
  projects: number;
  /** Sizes on the ladder (≥ 2) and the factor between two sizes. */
  steps: number;
  factor: number;
  /** The day purged under load at a size has min(size, purgeCap) messages; 0 skips the purge. */
  purgeCap: number;
  /** The longest wait for a step's webhooks (then the figure is what arrived, with a note). */
  settleS: number;
}

export function scaleOptions(quick: boolean, given: Partial<Record<keyof ScaleOptions, string | undefined>>): ScaleOptions {
  const number = (value: string | undefined, fallback: number) => (value === undefined ? fallback : Number(value));
  return {
    messages: number(given.messages, quick ? 3_000 : 300_000),
    projects: number(given.projects, quick ? 30 : 3_000),
    steps: number(given.steps, 2 + (quick ? 0 : 1)),
    factor: number(given.factor, 10),
    purgeCap: number(given.purgeCap, quick ? 3_000 : 100_000),
    settleS: number(given.settleS, quick ? 120 : 900),
  };
}

/** The ladder, smallest first: messages and projects at each size. */
export function ladder(options: ScaleOptions): { messages: number; projects: number }[] {
  return Array.from({ length: options.steps }, (_, i) => {
    const scale = options.factor ** (options.steps - 1 - i);
    return { messages: Math.round(options.messages / scale), projects: Math.max(2, Math.round(options.projects / scale)) };
  });
}

interface LadderFigure {
  key: string;
  label: string;
  digits: number;
  /** Latencies: the target is ratio ≤ 1.25; rates: ≥ 0.8; `ratio`: the figure is itself a ratio (≥ 0.8); `context`: no bar (sizes, what ran beside, the machine's pace). */
  kind: 'rate' | 'latency' | 'ratio' | 'context';
}

const FIGURES: LadderFigure[] = [
  { key: 'listReqPerS', label: 'list first page of a quiet project (others newer), 2xx/s at c=64', digits: 0, kind: 'rate' },
  { key: 'listP50', label: 'the same, p50 ms', digits: 1, kind: 'latency' },
  { key: 'eventsMs', label: 'GET /v1/messages/{id}/events, message of the large project, median ms', digits: 1, kind: 'latency' },
  { key: 'deliveriesFailedMs', label: 'GET /v1/webhook-deliveries?status=failed (large project), median ms', digits: 1, kind: 'latency' },
  { key: 'deliveriesEventMs', label: 'GET /v1/webhook-deliveries?event=message.read, median ms', digits: 1, kind: 'latency' },
  { key: 'deliveriesSinceMs', label: 'GET /v1/webhook-deliveries?since=1h ago, median ms', digits: 1, kind: 'latency' },
  { key: 'listOverAnchor', label: 'the list at c=64 ÷ bare Fastify answering its bytes right after, 2xx/s', digits: 2, kind: 'rate' },
  { key: 'eventsOverAnchor', label: "a message's events ÷ bare Fastify answering the same bytes, paired request by request (median of pairs)", digits: 2, kind: 'latency' },
  { key: 'deliveriesFailedOverAnchor', label: 'delivery log ?status=failed ÷ the same, paired', digits: 2, kind: 'latency' },
  { key: 'deliveriesEventOverAnchor', label: 'delivery log ?event= ÷ the same, paired', digits: 2, kind: 'latency' },
  { key: 'deliveriesSinceOverAnchor', label: 'delivery log ?since= ÷ the same, paired', digits: 2, kind: 'latency' },
  { key: 'eventsAnchorMs', label: "bare Fastify answering the events read's bytes, median ms (the machine's pace at each size)", digits: 2, kind: 'context' },
  { key: 'firstSentMs', label: "a new project's first message → SENT while the growth is queued, p50 ms", digits: 0, kind: 'latency' },
  { key: 'spreadPerS', label: 'webhook deliveries/s, a burst spread over every project', digits: 0, kind: 'rate' },
  { key: 'spreadFewPerS', label: "the same bursts over the smallest size's projects only", digits: 0, kind: 'rate' },
  { key: 'spreadManyOverFew', label: 'bursts over every project ÷ over the few, paired in time (median of pairs)', digits: 2, kind: 'ratio' },
  { key: 'growthWebhooksPerS', label: 'webhooks/s while the growth step reaches READ', digits: 0, kind: 'rate' },
  { key: 'readsWrittenMiB', label: "what svc wrote to storage while the reads above were measured (its checkpoints, on SQLite), MiB", digits: 1, kind: 'context' },
  { key: 'bytesPerMessage', label: 'bytes per READ message with 3 webhooks (whole database ÷ messages)', digits: 0, kind: 'context' },
  { key: 'purgeRatio', label: 'accept req/s while a day is purged ÷ without (day = min(size, cap))', digits: 2, kind: 'ratio' },
];

/** Figures that are ratios themselves (their bar applies to the value at the largest size). */
const RATIO_KEYS = new Set(FIGURES.filter((figure) => figure.kind === 'ratio').map((figure) => figure.key));

/** Figure rows × sizes, with each value's ratio to the smallest size and whether the largest meets issue 19's bar. */
export function ladderTable(sizesOnLadder: { messages: number; projects: number }[], bySize: Record<string, number>[]): string {
  const head = sizesOnLadder.map((size) => `${size.messages.toLocaleString('en-US')} msgs / ${size.projects.toLocaleString('en-US')} projects`);
  const lines = [`| figure | ${head.join(' | ')} | largest ÷ smallest | meets ≥ 0.8 (latency ≤ 1.25×) |`, `|---|${head.map(() => '---').join('|')}|---|---|`];
  const show = (value: number | undefined, digits: number) =>
    value === undefined || !Number.isFinite(value) ? '–' : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  for (const figure of FIGURES) {
    const values = bySize.map((figures) => figures[figure.key]);
    const first = values[0];
    const last = values.at(-1);
    const ratio = first !== undefined && last !== undefined && first !== 0 ? last / first : undefined;
    const cells = values.map((value, i) => (i === 0 || first === undefined || value === undefined || first === 0 ? show(value, figure.digits) : `${show(value, figure.digits)} (${show(value / first, 2)})`));
    const meets =
      figure.kind === 'context'
        ? 'n/a'
        : figure.kind === 'ratio'
          ? last === undefined ? '–' : last >= 0.8 ? 'yes' : 'no'
          : ratio === undefined ? '–' : (figure.kind === 'rate' ? ratio >= 0.8 : ratio <= 1.25) ? 'yes' : 'no';
    lines.push(`| ${figure.label} | ${cells.join(' | ')} | ${show(ratio, 2)} | ${meets} |`);
  }
  return lines.join('\n');
}

/** Spread bursts per size; the figure is their median. */
const SPREAD_BURSTS = 3;
/** New projects per size whose first message is timed to SENT during the growth (the figure is their median). */
const FIRST_SENT_SAMPLES = 5;
/** Sequential requests per read figure (their median): a read takes about 1–3 ms, and a few dozen swing by a millisecond. */
const READ_SAMPLES = 51;

/** Runs `work(i)` for i in [0, count) with `concurrency` in flight. */
async function pool(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/**
 * `times` sequential pairs: one svc read and the anchor's answer of the same bytes, in alternating
 * order, so that both halves of a pair meet the machine (and this client) in the same state. The
 * medians of each and the median of the pairs' ratios (svc ÷ anchor).
 */
async function pairedMs(times: number, read: () => Promise<unknown>, anchor: () => Promise<unknown>): Promise<{ svcMs: number; anchorMs: number; over: number }> {
  const timed = async (work: () => Promise<unknown>) => {
    const at = performance.now();
    await work();
    return performance.now() - at;
  };
  const svcTaken: number[] = [];
  const anchorTaken: number[] = [];
  for (let i = 0; i < times; i++) {
    if (i % 2 === 0) {
      svcTaken.push(await timed(read));
      anchorTaken.push(await timed(anchor));
    } else {
      anchorTaken.push(await timed(anchor));
      svcTaken.push(await timed(read));
    }
  }
  return { svcMs: median(svcTaken), anchorMs: median(anchorTaken), over: median(svcTaken.map((taken, i) => taken / anchorTaken[i]!)) };
}

async function getLoad(context: BenchContext, url: string, key: string, durationS: number): Promise<LoadResult> {
  const loadgen = spawnNode('get-loadgen', join(context.benchDir, 'getLoadgen.ts'), [JSON.stringify({ url, connections: CONNECTIONS, durationS, key })]);
  try {
    const line = await loadgen.waitForLine(/^RESULT /, (durationS + 60) * 1000);
    return JSON.parse(line.slice('RESULT '.length)) as LoadResult;
  } finally {
    await loadgen.stop();
  }
}

function scaleTarget(kind: DatabaseKind, options: ScaleOptions): Target {
  return {
    name: `scale-${kind}`,
    async run(context) {
      const database = await freshDatabase(kind, context.postgresUrl);
      const receivers = spawnNode('receivers', join(context.benchDir, 'receivers.ts'), [
        JSON.stringify(Array.from({ length: RECEIVERS }, (_, i) => ({ name: `r${i}`, kind: 'fast' }))),
      ]);
      const { control, urls } = JSON.parse((await receivers.waitForLine(/^receivers listening /, 20_000)).slice('receivers listening '.length)) as {
        control: string;
        urls: Record<string, string>;
      };
      const received = () => receivedTotal(control);
      try {
        const svc = await startSvc(context.svcDir, {
          SVC_DATABASE_URL: database.url,
          SVC_ALLOW_PRIVATE_CALLBACKS: 'true',
          SVC_PROVIDER_MAX_MPS: '100000',
          SVC_SANDBOX_DELIVERY_DELAY_MS: '0',
          SVC_SANDBOX_READ_DELAY_MS: '0',
          SVC_API_RATE_LIMIT: '10000000',
        });
        const url = svc.url!;
        let made = 0;
        const newSender = (name: string) =>
          createSender(url, { phoneNumberId: String(4_000_000_000 + made), name, callbackUrl: urls[`r${made++ % RECEIVERS}`]! });
        let recipient = 0;
        let sent = 0;
        const send = async (sender: Sender) => {
          // A send is not retried (no Idempotency-Key): a long wait, not a duplicate, on a loaded machine.
          const reply = await call(url, 'POST', '/v1/messages', { key: sender.key, body: messageBody(recipient++), timeoutMs: 300_000 });
          if (reply.status !== 202) throw new Error(`send: ${reply.status} ${reply.text.slice(0, 300)}`);
          sent++;
          return reply.body.id as string;
        };
        const notes: string[] = [];
        /**
         * Until every message sent is READ and its three webhooks arrived, or settleS passed (then a note
         * says what was missing); the deliveries that arrived and the seconds from `from` to the last of them.
         */
        const settle = async (from: number, deliveriesBefore: number, expected: number, what: string) => {
          let last = from;
          let seen = deliveriesBefore;
          const ok = await waitUntil(async () => {
            const now = await received();
            if (now > seen) [seen, last] = [now, Date.now()];
            return now - deliveriesBefore >= expected && (await countWhere(database, 'messages', "status = 'READ'")) >= sent;
          }, options.settleS * 1000, 250);
          if (!ok) notes.push(`${what}: ${seen - deliveriesBefore} of ${expected} deliveries within ${options.settleS} s; the measures went on`);
          return { delivered: seen - deliveriesBefore, seconds: (last - from) / 1000 };
        };

        // The quiet project sends once, first: every later message of the others is newer than its own.
        const quiet = await newSender('quiet');
        await pool(50, 16, async () => void (await send(quiet)));
        const big = await newSender('large');
        let bigMessageId: string | undefined;
        const others: Sender[] = [];
        const steps = ladder(options);
        const bySize: Record<string, number>[] = [];
        for (const [index, size] of steps.entries()) {
          const began = Date.now();
          while (others.length + 2 < size.projects) {
            const batch = Math.min(32, size.projects - 2 - others.length);
            others.push(...(await Promise.all(Array.from({ length: batch }, (_, i) => newSender(`tenant ${others.length + i}`)))));
          }
          const fresh = await Promise.all(Array.from({ length: FIRST_SENT_SAMPLES }, (_, i) => newSender(`new ${index}.${i}`)));
          const projectsS = (Date.now() - began) / 1000;
          // Growth: a tenth to the large project, the rest round-robin over the others.
          const count = Math.max(0, size.messages - sent);
          const deliveriesBefore = await received();
          const growFrom = Date.now();
          const firstSent: number[] = [];
          const samples = (async () => {
            // While the growth is under way (its messages queued behind one another), one new project at a time.
            await sleep(1000);
            for (const sender of fresh) {
              const at = Date.now();
              const id = await send(sender);
              await waitUntil(async () => (await call(url, 'GET', `/v1/messages/${id}`, { key: sender.key })).body.status !== 'QUEUED', 120_000, 20);
              firstSent.push(Date.now() - at);
            }
          })();
          await pool(count, CONNECTIONS, async (i) => {
            const id = await send(i % 10 === 0 ? big : others[i % others.length]!);
            if (i % 10 === 0) bigMessageId ??= id;
          });
          await samples;
          const acceptS = (Date.now() - growFrom) / 1000;
          const growth = await settle(growFrom, deliveriesBefore, (count + fresh.length) * EVENTS_PER_MESSAGE, `growth to ${size.messages}`);
          firstSent.sort((a, b) => a - b);
          context.log(
            `  ${kind} size ${size.messages}/${size.projects}: projects in ${projectsS.toFixed(0)} s, ${count} sends in ${acceptS.toFixed(0)} s, ${growth.delivered} webhooks in ${growth.seconds.toFixed(0)} s`,
          );
          if (database.kind === 'postgres') {
            // This schema's tables only (the database is shared), as autovacuum would in time.
            const tables = await database.query<{ name: string }>('select tablename as name from pg_tables where schemaname = current_schema()');
            await database.query(`analyze ${tables.map((table) => table.name).join(', ')}`);
          }
          const figures: Record<string, number> = {
            growthWebhooksPerS: growth.delivered / growth.seconds,
            firstSentMs: firstSent[Math.floor(firstSent.length / 2)]!,
          };
          const all = await sizes(database);
          figures.bytesPerMessage = [...all.values()].reduce((sum, bytes) => sum + bytes, 0) / sent;

          // What PostgreSQL's autovacuum does while the reads are measured (a step's updates leave
          // millions of dead rows just before): recorded beside the figures, not waited out.
          const vacuumed = watchAutovacuum(database);
          // And what svc itself wrote meanwhile (all its threads: the SQLite checkpointer's writes
          // of the growth's WAL land here), with the WAL's size as the reads began.
          const writtenBefore = io(svc.child.pid).write_bytes;
          const walMiB = database.kind === 'sqlite' && existsSync(`${database.place}-wal`) ? statSync(`${database.place}-wal`).size / 2 ** 20 : undefined;
          // Each read beside its anchor: bare Fastify, in its own process, answering the very bytes svc
          // answered at this size. Across sizes svc's own figures also carry the machine's pace of the
          // moment (a shared 2-core machine swings by a third over the half hour between two sizes);
          // svc ÷ anchor, measured together, does not.
          const since = encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString());
          const reads = {
            list: { path: '/v1/messages?limit=50', key: quiet.key },
            events: { path: `/v1/messages/${bigMessageId}/events`, key: big.key },
            deliveriesFailed: { path: '/v1/webhook-deliveries?status=failed', key: big.key },
            deliveriesEvent: { path: '/v1/webhook-deliveries?event=message.read', key: big.key },
            deliveriesSince: { path: `/v1/webhook-deliveries?since=${since}`, key: big.key },
          };
          const get = async (base: string, path: string, key: string) => {
            const reply = await call(base, 'GET', path, { key });
            if (reply.status !== 200) throw new Error(`${base}${path}: ${reply.status} ${reply.text.slice(0, 300)}`);
            return reply.text;
          };
          const bodies: Record<string, string> = {};
          for (const [name, read] of Object.entries(reads)) bodies[`/${name}`] = await get(url, read.path, read.key);
          const anchor = await startBareJson(context.benchDir, bodies);
          try {
            const loadS = context.quick ? 2 : 5;
            const list = await getLoad(context, `${url}${reads.list.path}`, quiet.key, loadS);
            const anchorList = await getLoad(context, `${anchor.url}/list`, quiet.key, loadS);
            figures.listReqPerS = list.ok2xx / list.durationS;
            figures.listP50 = list.latencyP50;
            figures.listOverAnchor = figures.listReqPerS / (anchorList.ok2xx / anchorList.durationS);
            for (const name of ['events', 'deliveriesFailed', 'deliveriesEvent', 'deliveriesSince'] as const) {
              const read = reads[name];
              const paired = await pairedMs(
                READ_SAMPLES,
                () => get(url, read.path, read.key),
                () => get(anchor.url, `/${name}`, read.key),
              );
              figures[`${name}Ms`] = paired.svcMs;
              figures[`${name}AnchorMs`] = paired.anchorMs;
              figures[`${name}OverAnchor`] = paired.over;
            }
          } finally {
            await anchor.stop();
          }
          const vacuuming = await vacuumed();
          figures.readsWrittenMiB = (io(svc.child.pid).write_bytes - writtenBefore) / 2 ** 20;
          context.log(
            `  ${kind} size ${size.messages}: svc wrote ${figures.readsWrittenMiB.toFixed(1)} MiB to storage during the reads` +
              (walMiB === undefined ? '' : `; the WAL file was ${walMiB.toFixed(1)} MiB as they began`),
          );
          if (vacuuming.length > 0) {
            notes.push(`size ${size.messages}: autovacuum ran during the reads: ${vacuuming.join('; ')}`);
            context.log(`  ${kind} size ${size.messages}: autovacuum during the reads: ${vacuuming.join('; ')}`);
          }

          // Bursts of webhooks spread over every project (the same bursts at every size); the figure
          // is their median, as one burst of a few seconds swings with the machine. (No larger than
          // the smallest size: the bursts' messages count towards the next size.)
          // Above the smallest size, each burst over every project is paired with the same burst over
          // the smallest size's projects only, right after it: issue 19's row (the same deliveries
          // over many projects ÷ over few) on this database, with the machine's pace of the moment in
          // both halves of each pair. Across sizes, spreadPerS also carries the database's growth and
          // the minutes between the sizes.
          const burst = Math.min(context.quick ? 300 : 3_000, steps[0]!.messages);
          const everyone = [big, ...others];
          const few = everyone.slice(0, steps[0]!.projects - 1);
          const spreadBurst = async (over: Sender[], what: string) => {
            const spreadBefore = await received();
            const spreadFrom = Date.now();
            await pool(burst, CONNECTIONS, async (i) => void (await send(over[i % over.length]!)));
            const spread = await settle(spreadFrom, spreadBefore, burst * EVENTS_PER_MESSAGE, `${what} at ${size.messages}`);
            return spread.delivered / spread.seconds;
          };
          const spreadRates: number[] = [];
          const fewRates: number[] = [];
          for (let round = 0; round < SPREAD_BURSTS; round++) {
            spreadRates.push(await spreadBurst(everyone, `burst ${round + 1} over every project`));
            if (few.length < everyone.length) fewRates.push(await spreadBurst(few, `burst ${round + 1} over ${few.length} projects`));
          }
          context.log(
            `  ${kind} size ${size.messages}: spread bursts ${spreadRates.map((rate) => rate.toFixed(0)).join(', ')} webhooks/s` +
              (fewRates.length > 0 ? `; over ${few.length} projects ${fewRates.map((rate) => rate.toFixed(0)).join(', ')}` : ''),
          );
          figures.spreadPerS = median(spreadRates);
          // At the smallest size the few are every project: its bursts are both figures.
          figures.spreadFewPerS = fewRates.length > 0 ? median(fewRates) : figures.spreadPerS;
          if (fewRates.length > 0) figures.spreadManyOverFew = median(spreadRates.map((rate, i) => rate / fewRates[i]!));

          if (options.purgeCap > 0) {
            const purge = await measurePurgeUnderLoad(kind, {
              svcDir: context.svcDir,
              postgresUrl: context.postgresUrl,
              messages: Math.min(size.messages, options.purgeCap),
              seconds: context.quick ? 3 : 10,
              periods: true,
            });
            figures.purgeRatio = purge.duringReqPerS / ((purge.baselineReqPerS + purge.afterReqPerS) / 2);
          }
          context.log(`  ${JSON.stringify(figures, (_key, value) => (typeof value === 'number' ? Math.round(value * 10) / 10 : value))}`);
          bySize.push(figures);
        }
        await svc.child.stop();
        const largest = bySize.at(-1)!;
        const ratios = Object.fromEntries(
          Object.entries(largest).flatMap(([key, value]) => (bySize[0]![key] && !RATIO_KEYS.has(key) ? [[`${key}Ratio`, value / bySize[0]![key]!]] : [])),
        );
        return { figures: { ...largest, ...ratios }, notes, detail: { ladder: steps, bySize } } satisfies Measurement;
      } finally {
        await receivers.stop();
        await database.close();
      }
    },
  };
}

/**
 * PostgreSQL: samples the autovacuum workers every 250 ms until the returned function is called,
 * which answers what they worked on ("VACUUM schema.table", …; empty on SQLite or when none ran).
 */
function watchAutovacuum(database: BenchDatabase): () => Promise<string[]> {
  const seen = new Set<string>();
  let stopped = database.kind !== 'postgres';
  const sampling = (async () => {
    while (!stopped) {
      const rows = await database.query<{ query: string }>("select query from pg_stat_activity where backend_type = 'autovacuum worker'");
      for (const row of rows) if (row.query) seen.add(row.query.replace(/^autovacuum:\s*/, ''));
      await sleep(250);
    }
  })();
  return async () => {
    stopped = true;
    await sampling;
    return [...seen];
  };
}

/** The options of the whole harness run (set by run.ts from its command line). */
export const scaleSettings: { given: Partial<Record<keyof ScaleOptions, string | undefined>> } = { given: {} };

export const scale: Scenario = {
  name: 'scale',
  title: 'scale: one database grown through the public API up a ladder of sizes (issue 19); figures at the largest size',
  figures: [
    ...FIGURES.filter((figure) => figure.kind === 'ratio').map(({ key, label, digits }) => ({ key, label, digits })),
    ...FIGURES.filter((figure) => figure.kind !== 'ratio').map(({ key, label }) => ({ key: `${key}Ratio`, label: `${label}: largest ÷ smallest`, digits: 2 })),
  ],
  targets(context) {
    const options = scaleOptions(context.quick, scaleSettings.given);
    return context.databases.map((kind) => scaleTarget(kind, options));
  },
  ratios: () => [],
  extraReport(context, results: TargetRuns[]) {
    const steps = ladder(scaleOptions(context.quick, scaleSettings.given));
    return results
      .flatMap((target) =>
        target.runs.map((run, i) =>
          run ? `#### ${target.target}, run ${i + 1}: each size, and its ratio to the smallest\n\n${ladderTable(steps, (run.detail as { bySize: Record<string, number>[] }).bySize)}` : '',
        ),
      )
      .filter(Boolean)
      .join('\n\n');
  },
};
