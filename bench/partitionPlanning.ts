// What PostgreSQL's time partitions (migration 0028) cost each statement: a statement whose key
// does not name one period is planned and started over every partition of the table, and svc's
// statements are planned at each execution (unnamed statements). This measures planning and
// execution time of the service's read shapes as the number of partitions grows, against its
// anchor in the same run: the same statement on the first partition alone (`…_before`, an
// ordinary table with the same indexes and rows).
//
//   SVC_TEST_POSTGRES_URL=… node bench/partitionPlanning.ts [--messages 20000] [--samples 200]
import pg from 'pg';
import { type Db, openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { FAMILIES, makePeriodsAhead, partitionsOf, periodFor } from '../src/db/partitions.ts';
import { dropBenchDatabases, freshDatabase } from './databases.ts';

const DAY = 86_400_000;
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1]! : fallback;
};
const MESSAGES = Number(option('messages', '20000'));
const SAMPLES = Number(option('samples', '200'));

interface Shape {
  name: string;
  sql: (table: (name: string) => string) => string;
  params: unknown[];
}

async function timings(client: pg.Client, text: string, params: unknown[]): Promise<{ planMs: number; execMs: number }> {
  const plans: number[] = [];
  const execs: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const result = await client.query(`explain (analyze, summary, format json) ${text}`, params);
    const plan = (result.rows[0]['QUERY PLAN'] as { 'Planning Time': number; 'Execution Time': number }[])[0]!;
    plans.push(plan['Planning Time']);
    execs.push(plan['Execution Time']);
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return { planMs: median(plans), execMs: median(execs) };
}

const postgresUrl = process.env.SVC_TEST_POSTGRES_URL;
if (!postgresUrl) throw new Error('SVC_TEST_POSTGRES_URL is required');
try {
  const bench = await freshDatabase('postgres', postgresUrl);
  const database = openDatabase(bench.url, { poolSize: 1 });
  const db: Db = database.db;
  await migrateToLatest(db);
  const project = 'proj_plan';
  await bench.query(`insert into projects (id, name, owner_email, webhook_secret_enc, created_at, updated_at) values ('${project}', 'p', 'p@example.com', 'x', 0, 0)`);
  const at = Date.now() - DAY;
  await bench.query(`insert into messages (id, project_id, recipient, template_id, template_name, language, category, variables,
      rendered, status, attempts, queued_at, updated_at, provider_message_id)
    select 'msg_' || lpad(i::text, 26, '0'), '${project}', '+1555' || i, 'tpl', 'bench', 'en', 'UTILITY', '{}', '{}', 'READ', 1, ${at}, ${at}, 'wamid.' || i
    from generate_series(1, ${MESSAGES}) as s(i)`);
  await bench.query(`insert into message_events (id, message_id, project_id, status, occurred_at, created_at)
    select 'evt_' || lpad((i * 3 + k)::text, 26, '0'), 'msg_' || lpad(i::text, 26, '0'), '${project}', 'SENT', ${at}, ${at}
    from generate_series(1, ${MESSAGES}) as s(i) cross join generate_series(0, 2) as k(k)`);
  await bench.query(`insert into webhook_deliveries (id, project_id, event_id, message_id, event, url, payload, status, attempt_count, created_at, updated_at)
    select '00000000-0000-7000-8000-' || lpad((i * 3 + k)::text, 12, '0'), '${project}', 'evt_' || lpad((i * 3 + k)::text, 26, '0'),
      'msg_' || lpad(i::text, 26, '0'), 'message.read', 'http://x', '{}', 'succeeded', 1, ${at}, ${at}
    from generate_series(1, ${MESSAGES}) as s(i) cross join generate_series(0, 2) as k(k)`);
  await bench.query('analyze messages, message_events, webhook_deliveries');

  const some = (n: number) => Array.from({ length: n }, (_, i) => `wamid.${(i * 7919) % MESSAGES}`);
  const shapes: Shape[] = [
    { name: 'message list page', sql: (t) => `select * from ${t('messages')} where project_id = $1 order by id desc limit 51`, params: [project] },
    { name: 'status reports (50, by provider id)', sql: (t) => `select * from ${t('messages')} where id = any($1::text[]) or provider_message_id = any($2::text[]) order by id`, params: [[], some(50)] },
    { name: 'a message by its key', sql: (t) => `select * from ${t('messages')} where project_id = $1 and id = $2`, params: [project, `msg_${'1'.padStart(26, '0')}`] },
    { name: "a message's events", sql: (t) => `select * from ${t('message_events')} where message_id = $1 order by id`, params: [`msg_${'1'.padStart(26, '0')}`] },
    { name: 'delivery log page', sql: (t) => `select * from ${t('webhook_deliveries')} where project_id = $1 order by id desc limit 51`, params: [project] },
  ];

  const client = new pg.Client({ connectionString: bench.url });
  await client.connect();
  // Warm the catalogue caches of this connection once.
  for (const shape of shapes) await client.query(shape.sql((t) => t), shape.params);

  console.log('| partitions (messages / deliveries) | statement | plan ms | execute ms | (plan + execute) ÷ the same on one table |');
  console.log('|---|---|---|---|---|');
  const steps = [0, 6, 14];
  for (const extra of steps) {
    // Periods ahead, as many as a longer-running database holds (their count is what matters).
    for (const family of FAMILIES) {
      const period = periodFor(family.name === 'messages' ? 400 * DAY : 30 * DAY);
      await makePeriodsAhead(db, family, Date.now() + extra * period, period);
    }
    const counts = await Promise.all(['messages', 'webhook_deliveries'].map(async (table) => (await partitionsOf(db, table)).length));
    for (const shape of shapes) {
      const partitioned = await timings(client, shape.sql((t) => t), shape.params);
      const anchor = await timings(client, shape.sql((t) => `only ${t}_before`), shape.params);
      const ratio = (partitioned.planMs + partitioned.execMs) / (anchor.planMs + anchor.execMs);
      console.log(
        `| ${counts.join(' / ')} | ${shape.name} | ${partitioned.planMs.toFixed(3)} (one table ${anchor.planMs.toFixed(3)}) | ${partitioned.execMs.toFixed(3)} (${anchor.execMs.toFixed(3)}) | ${ratio.toFixed(2)} |`,
      );
    }
  }
  await client.end();
  await database.close();
  await bench.close();
} finally {
  await dropBenchDatabases(postgresUrl);
}
