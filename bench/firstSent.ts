// A new tenant's first message beside a backlog (issue 19): N projects, each with its own sending
// number and Q queued messages, are drained by one svc process; meanwhile a new project sends one
// message, and the time from its 202 to SENT is measured (p50 of --samples new projects, one
// after another), with the drain's rate while it happens. Then the anchor: the same number of
// messages queued for one project, drained by the same processes unpaced (SVC_PROVIDER_MAX_MPS
// 100,000: one number's default pace would be the limit, not the dispatcher), its rate measured
// over 10 s after the same 2 s start; the figure is the many-project rate ÷ the one-project rate.
// --workers 2 (PostgreSQL): an api process beside two worker processes instead of one process.
//
//   node bench/firstSent.ts [--db sqlite|postgres] [--projects 1000] [--queued 20] [--samples 5] [--workers 0|2] [--no-anchor] [--svc-dir PATH]
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { countWhere, type DatabaseKind, dropBenchDatabases, freshDatabase, queueMessages } from './databases.ts';
import { sleep, stopAll } from './processes.ts';
import { call, createSender, messageBody, type Sender, startSvc } from './svc.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    'svc-dir': { type: 'string', default: resolve(benchDir, '..') },
    db: { type: 'string', default: 'sqlite' },
    projects: { type: 'string', default: '1000' },
    queued: { type: 'string', default: '20' },
    samples: { type: 'string', default: '5' },
    workers: { type: 'string', default: '0' },
    'no-anchor': { type: 'boolean', default: false },
  },
});

const kind = values.db as DatabaseKind;
const projects = Number(values.projects);
const queued = Number(values.queued);
const workers = Number(values.workers);
const svcDir = resolve(values['svc-dir']);

/** The processes that drain: one `all`, or an api beside `workers` worker processes. Returns the API's URL. */
async function startDrain(env: Record<string, string>): Promise<string> {
  if (workers === 0) return (await startSvc(svcDir, env, 'all')).url!;
  const api = await startSvc(svcDir, env, 'api');
  for (let i = 0; i < workers; i++) await startSvc(svcDir, env, 'worker');
  return api.url!;
}

let database = await freshDatabase(kind, process.env.SVC_TEST_POSTGRES_URL || undefined);
const env = {
  SVC_DATABASE_URL: database.url,
  SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000',
  SVC_API_RATE_LIMIT: '10000000',
};
try {
  // Setup through the API (a process without workers), then the backlog in bulk.
  const api = await startSvc(svcDir, env, 'api');
  const senders: Sender[] = [];
  for (let start = 0; start < projects; start += 32) {
    senders.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(32, projects - start) }, (_, i) =>
          createSender(api.url!, { phoneNumberId: String(1_000_000_000 + start + i), name: `tenant ${start + i}` }),
        ),
      )),
    );
  }
  const fresh = await Promise.all(
    Array.from({ length: Number(values.samples) }, (_, i) => createSender(api.url!, { phoneNumberId: String(2_000_000_000 + i), name: `new ${i}` })),
  );
  await api.child.stop();
  const total = await queueMessages(
    database,
    senders.map((sender, i) => ({ ...sender, firstRecipient: 20_000_000 + i * queued, count: queued })),
  );

  const url = await startDrain(env);
  await sleep(2000); // the drain is under way
  const latencies: number[] = [];
  const sentBefore = await countWhere(database, 'messages', "status <> 'QUEUED'");
  const startedAt = Date.now();
  for (const sender of fresh) {
    const accepted = await call(url, 'POST', '/v1/messages', { key: sender.key, body: messageBody(60_000_000 + latencies.length) });
    if (accepted.status !== 202) throw new Error(`send: ${accepted.status} ${accepted.text}`);
    const at = Date.now();
    for (;;) {
      const message = await call(url, 'GET', `/v1/messages/${accepted.body.id}`, { key: sender.key });
      if (message.body.status !== 'QUEUED') break;
      if (Date.now() - at > 300_000) throw new Error('not SENT within 300 s');
      await sleep(20);
    }
    latencies.push(Date.now() - at);
  }
  const drained = (await countWhere(database, 'messages', "status <> 'QUEUED'")) - sentBefore;
  const seconds = (Date.now() - startedAt) / 1000;
  latencies.sort((a, b) => a - b);
  const rate = drained / seconds;
  console.log(
    `${kind}${workers > 0 ? ` (api + ${workers} workers)` : ''}: ${projects} projects × ${queued} queued (${total}); a new project's first message QUEUED → SENT: ` +
      `p50 ${latencies[Math.floor(latencies.length / 2)]} ms (${latencies.join(', ')} ms); ` +
      `the backlog drained at ${rate.toFixed(0)} messages/s meanwhile`,
  );
  await stopAll();
  if (!values['no-anchor']) {
    await database.close();
    database = await freshDatabase(kind, process.env.SVC_TEST_POSTGRES_URL || undefined);
    const anchorEnv = { ...env, SVC_DATABASE_URL: database.url, SVC_PROVIDER_MAX_MPS: '100000' };
    const setup = await startSvc(svcDir, anchorEnv, 'api');
    const one = await createSender(setup.url!, { phoneNumberId: '1000000000', name: 'one tenant' });
    await setup.child.stop();
    await queueMessages(database, [{ ...one, firstRecipient: 20_000_000, count: total }]);
    await startDrain(anchorEnv);
    await sleep(2000);
    const before = await countWhere(database, 'messages', "status <> 'QUEUED'");
    const from = Date.now();
    await sleep(10_000);
    const oneRate = ((await countWhere(database, 'messages', "status <> 'QUEUED'")) - before) / ((Date.now() - from) / 1000);
    console.log(
      `one project × ${total} queued, unpaced: drained at ${oneRate.toFixed(0)} messages/s; ` +
        `${projects} projects ÷ one project = ${(rate / oneRate).toFixed(2)}`,
    );
  }
} finally {
  await stopAll();
  await database.close();
  await dropBenchDatabases(process.env.SVC_TEST_POSTGRES_URL || undefined);
}
