// A migrated database costs ~0.5 s of migrations (a second on a loaded machine), and the suite makes
// hundreds. Each kind is migrated once, by the service's own code, into a template shared by every
// test process of every run with the same migrations; a test's database is then a copy of it: a file
// copy on SQLite, `create database … template` on PostgreSQL. Tests of the migrations themselves
// still start from empty databases (createTestDatabase without `migrated`).
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

const srcDb = join(dirname(fileURLToPath(import.meta.url)), '../../src/db');

/** Changes with any migration's source (or the migrator's), so an edited migration is never stale. */
function schemaHash(): string {
  const hash = createHash('sha256');
  const dir = join(srcDb, 'migrations');
  for (const name of readdirSync(dir).sort()) hash.update(name).update(readFileSync(join(dir, name)));
  hash.update(readFileSync(join(srcDb, 'migrate.ts')));
  return hash.digest('hex').slice(0, 16);
}

let hash: string | undefined;
const currentHash = () => (hash ??= schemaHash());

/** Copies the SQLite template (made on first use) to `path`. */
export async function copyMigratedSqlite(path: string): Promise<void> {
  const template = join(tmpdir(), `svc-test-template-${currentHash()}.db`);
  if (!existsSync(template)) {
    // Built aside and renamed into place, so a process running beside this one sees it whole or not at all.
    const folder = join(tmpdir(), `svc-test-template-${currentHash()}-${process.pid}-${Date.now()}`);
    mkdirSync(folder);
    const database = openDatabase(`sqlite:${join(folder, 'svc.db')}`, { poolSize: 1 });
    try {
      await migrateToLatest(database.db);
    } finally {
      await database.close();
    }
    // Everything into the one file, so a copy of that file is the whole database.
    const file = new DatabaseSync(join(folder, 'svc.db'));
    file.exec('pragma wal_checkpoint(truncate)');
    file.close();
    renameSync(join(folder, 'svc.db'), template);
    rmSync(folder, { recursive: true, force: true });
  }
  copyFileSync(template, path);
}

const TEMPLATE_PREFIX = 'svc_test_template_';

/** Creates database `name` as a copy of the PostgreSQL template (made on first use, under a lock). */
export async function createMigratedPostgres(adminUrl: string, name: string): Promise<void> {
  const template = `${TEMPLATE_PREFIX}${currentHash()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    if (!(await exists(admin, template))) {
      await admin.query('select pg_advisory_lock(hashtext($1))', [template]);
      try {
        if (!(await exists(admin, template))) await buildPostgresTemplate(admin, adminUrl, template);
      } finally {
        await admin.query('select pg_advisory_unlock(hashtext($1))', [template]);
      }
    }
    await admin.query(`create database ${name} template ${template}`);
  } finally {
    await admin.end();
  }
}

async function exists(admin: pg.Client, database: string): Promise<boolean> {
  return (await admin.query('select 1 from pg_database where datname = $1', [database])).rowCount === 1;
}

async function buildPostgresTemplate(admin: pg.Client, adminUrl: string, template: string): Promise<void> {
  // Unique, dated: a run on another database of this server (its own lock) may build the same one.
  const building = `${template}_b${Math.floor(Date.now() / 1000).toString(16)}${randomBytes(4).toString('hex')}`;
  await admin.query(`create database ${building}`);
  const url = new URL(adminUrl);
  url.pathname = `/${building}`;
  const database = openDatabase(url.toString(), { poolSize: 1 });
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  // Renamed when whole; dated so resetPostgres can drop the templates of older migrations.
  try {
    await admin.query(`alter database ${building} rename to ${template}`);
    await admin.query(`comment on database ${template} is '${Math.floor(Date.now() / 1000)}'`);
  } catch (error) {
    if ((error as { code?: string }).code !== '42P04') throw error; // built meanwhile by that other run
    await admin.query(`drop database ${building}`);
  }
}

/**
 * Templates of other migrations made over a day ago (a run beside this one may still use a newer
 * one), and builds over an hour old that a killed process left.
 */
export async function dropStaleTemplates(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ name: string; made: string | null }>(
    `select datname as name, shobj_description(oid, 'pg_database') as made from pg_database
      where datname like '${TEMPLATE_PREFIX}%'`,
  );
  const now = Date.now() / 1000;
  const stale = rows.filter(({ name, made }) => {
    const building = /_b([0-9a-f]{8})[0-9a-f]{8}$/.exec(name);
    if (building) return now - Number.parseInt(building[1]!, 16) > 3600;
    return name !== `${TEMPLATE_PREFIX}${currentHash()}` && now - Number(made ?? 0) > 86_400;
  });
  for (const { name } of stale) await admin.query(`drop database if exists ${name} with (force)`);
  return stale.length;
}
