// Webhook deliveries spread over many projects (issue 19): the same number of deliveries, made by
// the same number of messages, once over a few projects and once over many; deliveries/s received
// for each, and the ratio. svc runs in its own process (role all, or an api process beside two
// workers), the receivers in theirs (bench/receivers.ts): ten fast receivers, each its own origin,
// the projects spread over them in turn so both runs have the same origins (and the same
// per-origin concurrency) and differ only in the number of projects.
//
// Messages are QUEUED in bulk and go through the sandbox (delivered and read at once): each makes
// SENT, DELIVERED and READ events, three deliveries. The rate is counted from the first delivery
// received to the last, so the dispatch's ramp-up is not in it.
//
//   node bench/webhookSpread.ts [--db sqlite|postgres] [--deliveries 20000] [--few 10] [--many 1000] [--workers 1|2] [--svc-dir PATH]
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type DatabaseKind, dropBenchDatabases, freshDatabase, queueMessages } from './databases.ts';
import { spawnNode, stopAll, waitUntil } from './processes.ts';
import { receivedTotal } from './receiverCounts.ts';
import { createSender, type Sender, startSvc, type SvcProcess } from './svc.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    'svc-dir': { type: 'string', default: resolve(benchDir, '..') },
    db: { type: 'string', default: 'sqlite' },
    deliveries: { type: 'string', default: '20000' },
    few: { type: 'string', default: '10' },
    many: { type: 'string', default: '1000' },
    workers: { type: 'string', default: '1' },
    'limit-s': { type: 'string', default: '300' },
  },
});

const kind = values.db as DatabaseKind;
const svcDir = resolve(values['svc-dir']);
const EVENTS_PER_MESSAGE = 3;
const RECEIVERS = 10;
const messages = Math.ceil(Number(values.deliveries) / EVENTS_PER_MESSAGE);
const workers = Number(values.workers);

const receiversChild = spawnNode(
  'receivers',
  join(benchDir, 'receivers.ts'),
  [JSON.stringify(Array.from({ length: RECEIVERS }, (_, i) => ({ name: `r${i}`, kind: 'fast' })))],
);
const { control, urls } = JSON.parse((await receiversChild.waitForLine(/^receivers listening /, 20_000)).slice('receivers listening '.length)) as {
  control: string;
  urls: Record<string, string>;
};

type Arrival = [name: string, arrivedAt: number, webhookId: string, event: string, occurredAt: number];
async function arrivals(): Promise<Arrival[]> {
  return ((await (await fetch(`${control}/_stats`, { signal: AbortSignal.timeout(60_000) })).json()) as { records: Arrival[] }).records;
}

/** One run: `projects` projects share `messages` queued messages; deliveries/s from the first received to the last. */
async function run(projects: number): Promise<{ perS: number; received: number; expected: number; seconds: number }> {
  const database = await freshDatabase(kind, process.env.SVC_TEST_POSTGRES_URL || undefined);
  const svcs: SvcProcess[] = [];
  const env = {
    SVC_DATABASE_URL: database.url,
    SVC_ALLOW_PRIVATE_CALLBACKS: 'true',
    SVC_PROVIDER_MAX_MPS: '100000',
    SVC_SANDBOX_DELIVERY_DELAY_MS: '0',
    SVC_SANDBOX_READ_DELAY_MS: '0',
    SVC_API_RATE_LIMIT: '10000000',
  };
  try {
    const api = await startSvc(svcDir, env, 'api');
    svcs.push(api);
    const senders: Sender[] = [];
    for (let start = 0; start < projects; start += 32) {
      senders.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(32, projects - start) }, (_, i) =>
            createSender(api.url!, {
              phoneNumberId: String(3_000_000_000 + start + i),
              name: `spread ${start + i}`,
              callbackUrl: urls[`r${(start + i) % RECEIVERS}`]!,
            }),
          ),
        )),
      );
    }
    const already = (await arrivals()).length;
    const perProject = Math.ceil(messages / projects);
    const queued = await queueMessages(
      database,
      senders.map((sender, i) => ({ ...sender, firstRecipient: 20_000_000 + i * perProject, count: Math.min(perProject, messages - i * perProject) })).filter(
        (batch) => batch.count > 0,
      ),
    );
    const expected = queued * EVENTS_PER_MESSAGE;
    // Counted before any worker starts: a worker delivers while the next one starts.
    const baseline = await receivedTotal(control);
    if (workers > 1) {
      for (let i = 0; i < workers; i++) svcs.push(await startSvc(svcDir, env, 'worker'));
    } else {
      await api.child.stop();
      svcs.push(await startSvc(svcDir, env, 'all'));
    }
    await waitUntil(async () => (await receivedTotal(control)) - baseline >= expected, Number(values['limit-s']) * 1000, 500);
    const got = (await arrivals()).slice(already);
    const ids = new Set(got.map((record) => record[2]));
    const times = got.map((record) => record[1]);
    const seconds = (Math.max(...times) - Math.min(...times)) / 1000;
    return { perS: ids.size / Math.max(0.001, seconds), received: ids.size, expected, seconds };
  } finally {
    await Promise.all(svcs.map((svc) => svc.child.stop()));
    await database.close();
  }
}

try {
  const few = await run(Number(values.few));
  const many = await run(Number(values.many));
  const line = (n: string, r: typeof few) =>
    `${n} projects: ${r.perS.toFixed(0)} deliveries/s (${r.received} of ${r.expected} in ${r.seconds.toFixed(1)} s)`;
  console.log(
    `${kind}, ${workers > 1 ? `api + ${workers} workers` : 'one process'}: ${line(values.few!, few)}; ${line(values.many!, many)}; ` +
      `many ÷ few = ${(many.perS / few.perS).toFixed(2)}`,
  );
} finally {
  await stopAll();
  await dropBenchDatabases(process.env.SVC_TEST_POSTGRES_URL || undefined);
}
