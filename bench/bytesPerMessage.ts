// Bytes a message costs at rest (issue 19): svc in its own process with the sandbox, N messages
// sent through the public API, each walking to READ with its three webhooks (sent, delivered,
// read) delivered to a receiver; then the size of every table and index, divided by N, beside
// the same sizes for an empty project (the setup subtracted).
//
//   node bench/bytesPerMessage.ts [--db sqlite|postgres] [--messages 5000] [--svc-dir PATH]
import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type BenchDatabase, countWhere, type DatabaseKind, dropBenchDatabases, freshDatabase } from './databases.ts';
import { sleep, stopAll } from './processes.ts';
import { call, createSender, messageBody, startSvc } from './svc.ts';

const benchDir = dirname(fileURLToPath(import.meta.url));

type Sizes = Map<string, number>;

/** Bytes of each table and index (SQLite: dbstat pages; PostgreSQL: relation sizes). */
export async function sizes(database: BenchDatabase): Promise<Sizes> {
  const rows =
    database.kind === 'sqlite'
      ? await database.query<{ name: string; bytes: number }>('select name, sum(pgsize) as bytes from dbstat group by name')
      : await database.query<{ name: string; bytes: string }>(
          `select c.relname as name, pg_relation_size(c.oid) + coalesce(pg_relation_size(c.reltoastrelid), 0) as bytes
           from pg_class c join pg_namespace n on n.oid = c.relnamespace
           where n.nspname = current_schema() and c.relkind in ('r', 'i', 'p')`,
        );
  return new Map(rows.map((row) => [row.name, Number(row.bytes)]));
}

async function receiver(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [resolve(benchDir, 'receivers.ts'), JSON.stringify([{ name: 'fast', kind: 'fast' }])], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((done) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) done(out);
    });
  });
  const url = /"fast":"([^"]+)"/.exec(line)![1]!;
  return { url, stop: () => child.kill() };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      'svc-dir': { type: 'string', default: resolve(benchDir, '..') },
      db: { type: 'string', default: 'sqlite' },
      messages: { type: 'string', default: '5000' },
    },
  });
  const kind = values.db as DatabaseKind;
  const count = Number(values.messages);
  const database = await freshDatabase(kind, process.env.SVC_TEST_POSTGRES_URL || undefined);
  const hook = await receiver();
  try {
    const svc = await startSvc(resolve(values['svc-dir']), {
      SVC_DATABASE_URL: database.url,
      SVC_ALLOW_PRIVATE_CALLBACKS: 'true',
      SVC_SANDBOX_DELIVERY_DELAY_MS: '50',
      SVC_SANDBOX_READ_DELAY_MS: '100',
      SVC_PROVIDER_MAX_MPS: '100000',
      SVC_API_RATE_LIMIT: '10000000',
    });
    const sender = await createSender(svc.url!, { callbackUrl: `${hook.url}/hook` });
    await sleep(1000);
    const before = await sizes(database);
    for (let start = 0; start < count; start += 64) {
      await Promise.all(
        Array.from({ length: Math.min(64, count - start) }, (_, i) =>
          call(svc.url!, 'POST', '/v1/messages', { key: sender.key, body: messageBody(start + i) }).then((reply) => {
            if (reply.status !== 202) throw new Error(`send: ${reply.status} ${reply.text}`);
          }),
        ),
      );
    }
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline) {
      const read = await countWhere(database, 'messages', "status = 'READ'");
      const delivered = await countWhere(database, 'webhook_deliveries', "status = 'succeeded'");
      if (read === count && delivered >= 3 * count) break;
      await sleep(1000);
    }
    await stopAll();
    // At rest: each message's row was updated four times (claimed, SENT, DELIVERED, READ); the dead
    // versions are reused space, not a cost per message, so the tables are compacted first.
    if (kind === 'postgres') {
      const tables = await database.query<{ name: string }>(
        "select tablename as name from pg_tables where schemaname = current_schema()",
      );
      for (const { name } of tables) await database.query(`vacuum full ${name}`);
    }
    const after = await sizes(database);
    const rows: [string, number][] = [...after].map(([name, bytes]) => [name, (bytes - (before.get(name) ?? 0)) / count]);
    rows.sort((a, b) => b[1] - a[1]);
    const total = rows.reduce((sum, [, bytes]) => sum + bytes, 0);
    // The sandbox provider's own records (what it was asked to send and what it reported): a
    // production provider (WhatsApp) writes none, so the figure as stored in production leaves them out.
    const sandboxOnly = rows.filter(([name]) => name.includes('sandbox_')).reduce((sum, [, bytes]) => sum + bytes, 0);
    console.log(`${kind}: ${count} messages READ with 3 webhooks each: ${(total - sandboxOnly).toFixed(0)} bytes per message as stored with the WhatsApp provider (no sandbox records)`);
    console.log(`  with the sandbox provider's own records: ${total.toFixed(0)} bytes per message`);
    for (const [name, bytes] of rows) if (Math.abs(bytes) >= 1) console.log(`  ${name.padEnd(40)} ${bytes.toFixed(0).padStart(6)}`);
  } finally {
    hook.stop();
    await stopAll();
    await database.close();
    await dropBenchDatabases(process.env.SVC_TEST_POSTGRES_URL || undefined);
  }
}
