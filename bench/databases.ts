// Fresh databases for each measured run, and the few plain-SQL statements the harness needs
// (bulk-queueing messages, counting), written here against the table columns so the harness
// works with any checkout of svc (--svc-dir).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';

export type DatabaseKind = 'sqlite' | 'postgres';

export interface BenchDatabase {
  readonly kind: DatabaseKind;
  /** What SVC_DATABASE_URL takes. */
  readonly url: string;
  /** The SQLite file, or the PostgreSQL schema. */
  readonly place: string;
  /** PostgreSQL application_name of every connection opened with `url` (to find their backends). */
  readonly applicationName: string | undefined;
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs statements in one transaction. */
  transaction(work: (run: (text: string, params?: unknown[]) => Promise<void>) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

const folders: string[] = [];
const schemas: string[] = [];

function sqliteDatabase(): BenchDatabase {
  const folder = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  folders.push(folder);
  const path = join(folder, 'bench.db');
  let handle: DatabaseSync | undefined;
  const open = () => {
    if (!handle) {
      handle = new DatabaseSync(path, { timeout: 10_000 });
      handle.exec('PRAGMA journal_mode = WAL');
    }
    return handle;
  };
  const run = async (text: string, params: unknown[] = []) => {
    open().prepare(text).run(...(params as never[]));
  };
  return {
    kind: 'sqlite',
    url: `sqlite:${path}`,
    place: path,
    applicationName: undefined,
    query: async <T>(text: string, params: unknown[] = []) => open().prepare(text).all(...(params as never[])) as T[],
    async transaction(work) {
      const db = open();
      db.exec('BEGIN IMMEDIATE');
      try {
        await work(run);
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    },
    close: async () => {
      handle?.close();
      handle = undefined;
    },
  };
}

async function postgresDatabase(base: string): Promise<BenchDatabase> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  schemas.push(schema);
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  url.searchParams.set('application_name', schema);
  let pool: pg.Pool | undefined;
  // Idle connections are kept: while this target runs, a connection named after its schema
  // tells another harness's cleanup that the schema is in use.
  const open = () => (pool ??= new pg.Pool({ connectionString: url.toString(), max: 2, idleTimeoutMillis: 0 }));
  await open().query('select 1');
  return {
    kind: 'postgres',
    url: url.toString(),
    place: schema,
    applicationName: schema,
    query: async <T>(text: string, params: unknown[] = []) => (await open().query(text, params)).rows as T[],
    async transaction(work) {
      const client = await open().connect();
      try {
        await client.query('begin');
        await work(async (text, params = []) => {
          await client.query(text, params);
        });
        await client.query('commit');
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: async () => {
      await pool?.end();
      pool = undefined;
    },
  };
}

/** A fresh, empty database: a new SQLite file in a temp folder, or a new PostgreSQL schema. */
export async function freshDatabase(kind: DatabaseKind, postgresUrl: string | undefined): Promise<BenchDatabase> {
  if (kind === 'sqlite') return sqliteDatabase();
  if (!postgresUrl) throw new Error('PostgreSQL targets need SVC_TEST_POSTGRES_URL');
  return postgresDatabase(postgresUrl);
}

/**
 * Removes what the runs made: SQLite folders, and PostgreSQL schemas named bench_… (with a
 * suffix such as _gw for graphile-worker's). Called once at the end, not after each run:
 * dropping a schema while another process's migrator reads the catalogue can fail that
 * migrator. Schemas another run left (crashed) go too, unless a connection named after one
 * (its application_name) is open: then another harness is using it now.
 */
export async function dropBenchDatabases(postgresUrl: string | undefined): Promise<void> {
  // SVC_BENCH_KEEP_SQLITE=1 leaves the SQLite files (their folders are logged) for EXPLAIN QUERY PLAN afterwards.
  const keep = process.env.SVC_BENCH_KEEP_SQLITE === '1';
  for (const folder of folders.splice(0)) {
    if (keep) console.error(`kept SQLite bench files in ${folder}`);
    else rmSync(folder, { recursive: true, force: true });
  }
  const own = new Set(schemas.splice(0));
  if (!postgresUrl) return;
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; busy: boolean }>(
      `select nspname as name,
              exists (select 1 from pg_stat_activity where application_name = substring(nspname from '^bench_[0-9a-f]{12}')) as busy
       from pg_namespace where nspname ~ '^bench_[0-9a-f]{12}(_[a-z]+)?$'`,
    );
    for (const { name, busy } of rows) {
      const base = name.slice(0, 'bench_'.length + 12);
      if (own.has(base) || !busy) await client.query(`drop schema if exists ${name} cascade`);
    }
  } finally {
    await client.end();
  }
}

// Message ids as svc makes them: msg_ + 10 characters of millisecond time + 16 random ones, in
// lowercase Crockford base32, so they sort by creation time.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
function messageId(now: number, sequence: number): string {
  let time = '';
  let rest = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[rest % 32] + time;
    rest = Math.floor(rest / 32);
  }
  // The sequence keeps ids made in one millisecond in order; the rest is random.
  let seq = '';
  let n = sequence;
  for (let i = 0; i < 6; i++) {
    seq = ALPHABET[n % 32] + seq;
    n = Math.floor(n / 32);
  }
  const random = Array.from(randomBytes(10), (byte) => ALPHABET[byte % 32]).join('');
  return `msg_${time}${seq}${random}`;
}

export interface QueuedMessages {
  projectId: string;
  templateId: string;
  templateName: string;
  language: string;
  /** Recipients are +55119 followed by 8 digits from this number on. */
  firstRecipient: number;
  count: number;
  /** BODY text with {{1}}, filled with the message's index. */
  bodyText: string;
}

const MESSAGE_COLUMNS = [
  'id', 'project_id', 'recipient', 'template_id', 'template_name', 'language', 'category', 'variables',
  'header_variables', 'rendered', 'status', 'attempts', 'due_at', 'lease_expires_at', 'provider_message_id',
  'error', 'queued_at', 'sent_at', 'delivered_at', 'read_at', 'failed_at', 'updated_at',
];

/**
 * Inserts QUEUED messages, due now, in one transaction (multi-row inserts of 500). The batches
 * are interleaved (one message of each in turn, ids in that order), as if their projects had
 * been sending side by side.
 */
export async function queueMessages(database: BenchDatabase, batches: QueuedMessages[], now = Date.now()): Promise<number> {
  const rows: unknown[][] = [];
  const longest = Math.max(0, ...batches.map((batch) => batch.count));
  for (let i = 0; i < longest; i++) {
    for (const batch of batches) {
      if (i >= batch.count) continue;
      const value = String(i);
      rows.push([
        messageId(now, rows.length), batch.projectId, `+55119${String(batch.firstRecipient + i).padStart(8, '0')}`,
        batch.templateId, batch.templateName, batch.language, 'UTILITY', JSON.stringify({ '1': value }), null,
        JSON.stringify({ body: batch.bodyText.replace('{{1}}', value) }), 'QUEUED', 0, now, null, null, null, now,
        null, null, null, null, now,
      ]);
    }
  }
  const chunk = 500;
  await database.transaction(async (run) => {
    for (let start = 0; start < rows.length; start += chunk) {
      const slice = rows.slice(start, start + chunk);
      const width = MESSAGE_COLUMNS.length;
      const placeholders = slice
        .map((_, r) =>
          `(${MESSAGE_COLUMNS.map((__, c) => (database.kind === 'postgres' ? `$${r * width + c + 1}` : '?')).join(', ')})`,
        )
        .join(', ');
      await run(`insert into messages (${MESSAGE_COLUMNS.join(', ')}) values ${placeholders}`, slice.flat());
    }
  });
  return rows.length;
}

export async function countWhere(database: BenchDatabase, table: string, where = 'true'): Promise<number> {
  const rows = await database.query<{ n: number | string }>(`select count(*) as n from ${table} where ${where}`);
  return Number(rows[0]!.n);
}
