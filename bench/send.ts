// Throughput and latency of POST /v1/messages (accept path, group commit) and of the dispatcher
// draining what was accepted. Run: npm run bench [-- --messages 5000 --concurrency 64]
// With SVC_TEST_POSTGRES_URL set, PostgreSQL is measured too.
import { parseArgs } from 'node:util';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createTestDatabase, databaseKinds } from '../test/support/databases.ts';
import { call } from '../test/support/http.ts';
import { senderAt } from '../test/support/sending.ts';
import { TEST_ENCRYPTION_KEY } from '../test/support/server.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '64' },
  },
});
const MESSAGES = Number(values.messages);
const CONCURRENCY = Number(values.concurrency);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(kind: 'sqlite' | 'postgres'): Promise<string> {
  const database = await createTestDatabase(kind);
  const config = loadConfig({
    SVC_LOG_LEVEL: 'silent',
    SVC_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    SVC_DATABASE_URL: database.url,
    PORT: '0',
    SVC_SIGNUP_RATE_LIMIT: '100000',
    SVC_PROVIDER_MAX_MPS: '100000',
    SVC_SANDBOX_DELIVERY_DELAY_MS: '3600000',
  });
  const app = await createApp(config);
  const url = (await app.start())!;
  try {
    const { key } = await senderAt(url, { templateName: 'bench', language: 'en', bodyText: 'Your code is {{1}} now.' });

    const latencies: number[] = [];
    let next = 0;
    let refused = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < MESSAGES) {
          const i = next++;
          const t0 = performance.now();
          const reply = await call(url, 'POST', '/v1/messages', {
            key,
            body: { to: `+55119${String(30_000_000 + i)}`, template: 'bench', language: 'en', variables: { '1': String(i) } },
          });
          latencies.push(performance.now() - t0);
          if (reply.status !== 202) refused++;
        }
      }),
    );
    const acceptMs = performance.now() - started;
    let sentAfterMs = 0;
    for (;;) {
      const row = await app.database.db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('status', '=', 'QUEUED')
        .executeTakeFirstOrThrow();
      if (Number(row.count) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    sentAfterMs = performance.now() - started;
    latencies.sort((a, b) => a - b);
    return (
      `| ${kind} | ${MESSAGES} | ${CONCURRENCY} | ${Math.round((MESSAGES / acceptMs) * 1000)} | ` +
      `${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ` +
      `${Math.round((MESSAGES / sentAfterMs) * 1000)} | ${refused} |`
    );
  } finally {
    await app.stop();
    await database.drop();
  }
}

console.log('| database | messages | concurrency | accepted/s | p50 ms | p99 ms | sent/s (accept→all SENT) | non-202 |');
console.log('|---|---|---|---|---|---|---|---|');
for (const kind of databaseKinds()) console.log(await measure(kind));
