// Purge under load (issue 19, requirement 3): POST /v1/messages throughput while svc's own worker
// purges a day of finished messages (each with 3 status events, 3 delivered webhooks with their
// payloads and attempts, and a sandbox record), against the same load without a purge.
//
//   node bench/purgeUnderLoad.ts [--kinds sqlite,postgres,postgres-batched] [--messages 50000] [--seconds 10] [--runs 1] [--svc-dir PATH]
//
// svc runs as users run it (role all, its own process). The day is written in plain SQL, dated two
// days back; the "during" svc has SVC_RETENTION_MESSAGES=1d, and the load starts once its purge
// run holds the lease (retention_state.holder), so the load and the purge overlap from the start;
// the same process is measured again once the purge is done.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchDatabase, countWhere, type DatabaseKind, dropBenchDatabases, freshDatabase } from './databases.ts';
import { runLoad } from './load.ts';
import { sleep, stopAll, waitUntil } from './processes.ts';
import { createSender, startSvc } from './svc.ts';
import { prefixedIdBytes } from '../test/support/bulkSeed.ts';
import { FAMILIES } from '../src/db/partitions.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));
const CONNECTIONS = 64;
const DAY = 86_400_000;

// Time-sortable ids as svc makes them (msg_/evt_/att_ + 10 characters of time; UUIDv7), made in SQL.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0, rest = ms; i < 10; i++, rest = Math.floor(rest / 32)) out = ALPHABET[rest % 32] + out;
  return out;
}

/** Whether the svc checkout stores delivery ids as bytes (SQLite, migration 0027_delivery_ids_as_bytes). */
async function storesIdsAsBytes(database: BenchDatabase): Promise<boolean> {
  if (database.kind !== 'sqlite') return false;
  return (await database.query("select 1 from svc_migrations where name = '0027_delivery_ids_as_bytes'")).length > 0;
}

/** A day of finished messages of one project at `at`, in a few set-based statements. */
async function seedDay(database: BenchDatabase, projectId: string, templateId: string, at: number, messages: number): Promise<void> {
  const pg = database.kind === 'postgres';
  const series = pg ? `generate_series(1, ${messages}) as s(i)` : `(with recursive s(i) as (select 1 union all select i + 1 from s where i < ${messages}) select i from s) as s`;
  const triple = pg ? `generate_series(0, 2) as k(k)` : `(select 0 as k union all select 1 union all select 2) as k`;
  const pad = (expr: string, n: number) => (pg ? `lpad((${expr})::text, ${n}, '0')` : `substr('${'0'.repeat(n)}' || (${expr}), -${n})`);
  const time = encodeTime(at);
  const hex = at.toString(16).padStart(12, '0');
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-`;
  const payload = JSON.stringify({ type: 'message.read', data: { text: 'x'.repeat(900) } });
  const statuses = `case k when 0 then 'SENT' when 1 then 'DELIVERED' else 'READ' end`;
  // The deliveries' ids as svc writes them: text, or 16 bytes each on SQLite since its migration
  // 0027 (created_at then left to the id, which carries it).
  const bytes = await storesIdsAsBytes(database);
  const deliveryId = bytes ? `unhex('${hex}70008000' || ${pad('i * 3 + k', 12)})` : `'${uuid}' || ${pad('i * 3 + k', 12)}`;
  const eventId = bytes ? prefixedIdBytes(String(at), pad('i * 3 + k', 16)) : `'evt_${time}' || ${pad('i * 3 + k', 16)}`;
  const messageId = bytes ? prefixedIdBytes(String(at), pad('i', 16)) : `'msg_${time}' || ${pad('i', 16)}`;
  await database.transaction(async (run) => {
    await run(`insert into messages (id, project_id, recipient, template_id, template_name, language, category, variables,
        header_variables, rendered, status, attempts, due_at, lease_expires_at, provider_message_id, error, queued_at,
        sent_at, delivered_at, read_at, failed_at, updated_at)
      select 'msg_${time}' || ${pad('i', 16)}, '${projectId}', '+55118' || ${pad('i', 8)}, '${templateId}', 'bench', 'en',
        'UTILITY', '{"1":"1"}', null, '{"body":"Your code is 1 now."}', 'READ', 1, null, null, 'wamid.' || i, null,
        ${at}, ${at}, ${at}, ${at}, null, ${at}
      from ${series}`);
    await run(`insert into message_events (id, message_id, project_id, status, occurred_at, error, created_at)
      select 'evt_${time}' || ${pad('i * 3 + k', 16)}, 'msg_${time}' || ${pad('i', 16)}, '${projectId}', ${statuses}, ${at}, null, ${at}
      from ${series} cross join ${triple}`);
    await run(`insert into webhook_deliveries (id, project_id, event_id, message_id, event, url, payload, status, attempt_count,
        due_at, lease_expires_at, created_at, updated_at, endpoint_id, template_id)
      select ${deliveryId}, '${projectId}', ${eventId},
        ${messageId}, 'message.read', 'http://127.0.0.1:9/hook', '${payload}', 'succeeded', 1,
        null, null, ${bytes ? 'null' : at}, ${at}, null, null
      from ${series} cross join ${triple}`);
    await run(`insert into webhook_attempts (id, delivery_id, attempt, at, url, status_code, duration_ms, error, response_body)
      select 'att_${time}' || ${pad('i * 3 + k', 16)}, ${deliveryId}, 1, ${at}, 'http://127.0.0.1:9/hook', 200, 5, null, 'ok'
      from ${series} cross join ${triple}`);
    await run(`insert into sandbox_submissions (id, message_id, provider_message_id, recipient, outcome, submitted_at)
      select 'att_${time}z' || ${pad('i', 15)}, 'msg_${time}' || ${pad('i', 16)}, 'wamid.' || i, '+55118' || ${pad('i', 8)}, 'accepted', ${at}
      from ${series}`);
  });
  if (pg) await database.query('analyze messages, message_events, webhook_deliveries, webhook_attempts, sandbox_submissions');
}

/**
 * PostgreSQL (migration 0028): the time partitions as svc makes them after running for days — a
 * partition per day from `days` ago to two days ahead, the one before them ending then — so the
 * day seeded two days back is in a period of its own, which the purge drops. (A fresh database
 * has one partition up to the next midnight, which a purge dated by the real clock never
 * reaches.) Run on the empty tables, before the seed.
 */
async function dailyPartitionsSince(database: BenchDatabase, days: number): Promise<void> {
  const midnight = Math.floor(Date.now() / DAY) * DAY;
  const families = FAMILIES.map((family) => ({ tables: [family.lead.table, family.child.table], bound: family.bound }));
  await database.transaction(async (run) => {
    for (const { tables, bound } of families) {
      for (const table of tables) {
        await run(`drop table ${table}_before`);
        await run(`create table ${table}_before partition of ${table} for values from (minvalue) to ('${bound(midnight - days * DAY)}')`);
        for (let day = midnight - days * DAY; day <= midnight + 2 * DAY; day += DAY) {
          const name = `${table}_${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}`;
          await run(`create table ${name} partition of ${table} for values from ('${bound(day)}') to ('${bound(day + DAY)}')`);
        }
      }
    }
  });
}

async function sizeOf(database: BenchDatabase): Promise<number> {
  if (database.kind === 'sqlite') {
    const pages = await database.query<{ page_count: number }>('pragma page_count');
    return Number(pages[0]!.page_count) * 4096;
  }
  const rows = await database.query<{ bytes: string }>(
    `select coalesce(sum(pg_total_relation_size(c.oid)), 0) as bytes from pg_class c
     join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind = 'r'`,
  );
  return Number(rows[0]!.bytes);
}

export interface PurgeOptions {
  svcDir: string;
  postgresUrl: string | undefined;
  /** Messages in the purged day. */
  messages: number;
  /** Seconds of each load. */
  seconds: number;
  /**
   * PostgreSQL: lay the time partitions out as after days of running, so the day purged is a
   * period of its own, dropped whole; without, it is in the first partition, purged in batches.
   */
  periods?: boolean;
}

export interface PurgeResult {
  kind: DatabaseKind;
  periods: boolean;
  baselineReqPerS: number;
  duringReqPerS: number;
  afterReqPerS: number;
  baselineP99: number;
  duringP99: number;
  purgeMs: number;
  purgeOverlapsLoad: boolean;
  purged: Record<string, number>;
  bytesBefore: number;
  bytesAfter: number;
}

/** One database: accept throughput before, during and after the purge of a day of `messages`. */
export async function measurePurgeUnderLoad(kind: DatabaseKind, { svcDir, postgresUrl, messages, seconds: SECONDS, periods = false }: PurgeOptions): Promise<PurgeResult> {
  const database = await freshDatabase(kind, postgresUrl);
  // The API's rate limit (6,000 requests a minute per key by default) off: with it, every run measured the limiter.
  const env = { SVC_DATABASE_URL: database.url, SVC_SANDBOX_DELIVERY_DELAY_MS: '0', SVC_SANDBOX_READ_DELAY_MS: '0', SVC_API_RATE_LIMIT: '10000000' };
  // Baseline: nothing past retention (400 days), the same data.
  let svc = await startSvc(svcDir, env, 'all');
  const sender = await createSender(svc.url!);
  if (kind === 'postgres' && periods) await dailyPartitionsSince(database, 3);
  await seedDay(database, sender.projectId, sender.templateId, Date.now() - 2 * DAY, messages);
  const bytesBefore = await sizeOf(database);
  await runLoad(benchDir, { url: `${svc.url}/v1/messages`, connections: CONNECTIONS, durationS: 2, key: sender.key, firstIndex: 5_000_000 }, [svc.child.pid]);
  const baseline = await runLoad(benchDir, { url: `${svc.url}/v1/messages`, connections: CONNECTIONS, durationS: SECONDS, key: sender.key, firstIndex: 6_000_000 }, [svc.child.pid], database);
  await svc.child.stop();

  // During: the same svc with a one-day retention; its worker starts the purge at once.
  await database.query('update retention_state set next_run_at = 0, holder = null, lease_expires_at = 0');
  svc = await startSvc(svcDir, { ...env, SVC_RETENTION_MESSAGES: '1d', SVC_RETENTION_WEBHOOK_DELIVERIES: '1d' }, 'all');
  const startedAt = Date.now();
  await waitUntil(async () => (await database.query<{ holder: string | null }>('select holder from retention_state'))[0]!.holder !== null, 30_000, 20);
  const during = await runLoad(benchDir, { url: `${svc.url}/v1/messages`, connections: CONNECTIONS, durationS: SECONDS, key: sender.key, firstIndex: 7_000_000 }, [svc.child.pid], database);
  const loadEndedAt = Date.now();
  const line = await svc.child.waitForLine(/"msg":"retention purge run"/, 30 * 60_000);
  const log = JSON.parse(line) as { purged: Record<string, number>; ms: number };
  const purgeEndedAt = Date.now();
  // After: the same process, the purge done (the other side of the comparison, against drift).
  const afterPurge = await runLoad(benchDir, { url: `${svc.url}/v1/messages`, connections: CONNECTIONS, durationS: SECONDS, key: sender.key, firstIndex: 8_000_000 }, [svc.child.pid], database);
  await svc.child.stop();
  const left = await countWhere(database, 'messages', `queued_at < ${Date.now() - DAY}`);
  if (left !== 0) throw new Error(`${left} old messages left after the purge`);
  const bytesAfter = await sizeOf(database);
  await database.close();
  await sleep(200);
  return {
    kind,
    periods: kind === 'postgres' && periods,
    baselineReqPerS: baseline.result.ok2xx / baseline.result.durationS,
    duringReqPerS: during.result.ok2xx / during.result.durationS,
    afterReqPerS: afterPurge.result.ok2xx / afterPurge.result.durationS,
    baselineP99: baseline.result.latencyP99,
    duringP99: during.result.latencyP99,
    purgeMs: log.ms,
    // The purge's log line came after the load ended: it ran the whole time of the load.
    purgeOverlapsLoad: purgeEndedAt >= loadEndedAt && startedAt + log.ms >= loadEndedAt - 1000,
    purged: log.purged,
    bytesBefore,
    bytesAfter,
  };
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string) => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? args[at + 1]! : fallback;
  };
  const svcDir = resolve(option('svc-dir', join(benchDir, '..')));
  const postgresUrl = process.env.SVC_TEST_POSTGRES_URL;
  // postgres: its periods dropped whole; postgres-batched: the same day purged in batches.
  const kinds = option('kinds', postgresUrl ? 'sqlite,postgres,postgres-batched' : 'sqlite').split(',');
  const MESSAGES = Number(option('messages', '50000'));
  const SECONDS = Number(option('seconds', '10'));
  const RUNS = Number(option('runs', '1'));
  try {
    const results: PurgeResult[] = [];
    for (let run = 0; run < RUNS; run++) {
      for (const kind of kinds) {
        const options = { svcDir, postgresUrl, messages: MESSAGES, seconds: SECONDS, periods: kind === 'postgres' };
        results.push(await measurePurgeUnderLoad(kind === 'postgres-batched' ? 'postgres' : (kind as DatabaseKind), options));
      }
    }
    console.log(`| database | accept req/s before | during the purge | after it | during ÷ mean(before, after) | p99 ms (before / during) | purge time | rows purged | purge covers the load | size before → after |`);
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const r of results) {
      const rows = Object.entries(r.purged).filter(([kind]) => !kind.startsWith('message_counts')).reduce((sum, [, n]) => sum + n, 0);
      console.log(
        `| ${r.kind}${r.kind === 'postgres' ? (r.periods ? ', periods dropped' : ', batched') : ''} | ${r.baselineReqPerS.toFixed(0)} | ${r.duringReqPerS.toFixed(0)} | ${r.afterReqPerS.toFixed(0)} | ${(r.duringReqPerS / ((r.baselineReqPerS + r.afterReqPerS) / 2)).toFixed(2)} | ` +
          `${r.baselineP99} / ${r.duringP99} | ${(r.purgeMs / 1000).toFixed(1)} s | ${rows} (${JSON.stringify(r.purged)}) | ${r.purgeOverlapsLoad ? 'yes' : 'no'} | ` +
          `${(r.bytesBefore / 2 ** 20).toFixed(0)} → ${(r.bytesAfter / 2 ** 20).toFixed(0)} MiB |`,
      );
    }
  } finally {
    await stopAll();
    await dropBenchDatabases(postgresUrl);
  }
}
