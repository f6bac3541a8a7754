// A new tenant's first message beside a backlog (issue 19): N projects, each with its own sending
// number and Q queued messages, are drained by one svc process; meanwhile a new project sends one
// message, and the time from its 202 to SENT is measured (p50 of --samples new projects, one
// after another), with the drain's rate while it happens.
//
//   node bench/firstSent.ts [--db sqlite|postgres] [--projects 1000] [--queued 20] [--samples 5] [--svc-dir PATH]
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
  },
});

const kind = values.db as DatabaseKind;
const projects = Number(values.projects);
const queued = Number(values.queued);
const database = await freshDatabase(kind, process.env.SVC_TEST_POSTGRES_URL || undefined);
const env = {
  SVC_DATABASE_URL: database.url,
  SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000',
  SVC_API_RATE_LIMIT: '10000000',
};
try {
  // Setup through the API (a process without workers), then the backlog in bulk.
  const api = await startSvc(resolve(values['svc-dir']), env, 'api');
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

  const svc = await startSvc(resolve(values['svc-dir']), env, 'all');
  await sleep(2000); // the drain is under way
  const latencies: number[] = [];
  const sentBefore = await countWhere(database, 'messages', "status <> 'QUEUED'");
  const startedAt = Date.now();
  for (const sender of fresh) {
    const accepted = await call(svc.url!, 'POST', '/v1/messages', { key: sender.key, body: messageBody(60_000_000 + latencies.length) });
    if (accepted.status !== 202) throw new Error(`send: ${accepted.status} ${accepted.text}`);
    const at = Date.now();
    for (;;) {
      const message = await call(svc.url!, 'GET', `/v1/messages/${accepted.body.id}`, { key: sender.key });
      if (message.body.status !== 'QUEUED') break;
      if (Date.now() - at > 300_000) throw new Error('not SENT within 300 s');
      await sleep(20);
    }
    latencies.push(Date.now() - at);
  }
  const drained = (await countWhere(database, 'messages', "status <> 'QUEUED'")) - sentBefore;
  const seconds = (Date.now() - startedAt) / 1000;
  latencies.sort((a, b) => a - b);
  console.log(
    `${kind}: ${projects} projects × ${queued} queued (${total}); a new project's first message QUEUED → SENT: ` +
      `p50 ${latencies[Math.floor(latencies.length / 2)]} ms (${latencies.join(', ')} ms); ` +
      `the backlog drained at ${(drained / seconds).toFixed(0)} messages/s meanwhile`,
  );
} finally {
  await stopAll();
  await database.close();
  await dropBenchDatabases(process.env.SVC_TEST_POSTGRES_URL || undefined);
}
