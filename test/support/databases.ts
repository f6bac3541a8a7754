import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/database.ts';
import type { ProjectRow } from '../../src/db/projects.ts';
import { copyMigratedSqlite, createMigratedPostgres } from './migratedTemplates.ts';

export type DatabaseKind = 'sqlite' | 'postgres';

/** SQLite always; PostgreSQL too when SVC_TEST_POSTGRES_URL is set (CI always sets it). */
export function databaseKinds(): DatabaseKind[] {
  return process.env.SVC_TEST_POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

export interface TestDatabase {
  readonly kind: DatabaseKind;
  readonly url: string;
  /** For PostgreSQL, the schema that isolates this database; for SQLite, the folder. */
  readonly place: string;
  drop(): Promise<void>;
}

/**
 * A fresh database: a new SQLite file, or a new PostgreSQL schema; with `migrated`, a copy of a
 * template the service's migrations made (a file on SQLite, a database on PostgreSQL), which
 * costs a copy instead of every migration.
 */
export async function createTestDatabase(kind: DatabaseKind, options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'svc-test-'));
    const path = join(folder, 'svc.db');
    if (options.migrated) await copyMigratedSqlite(path);
    return {
      kind,
      url: `sqlite:${path}`,
      place: folder,
      drop: async () => rmSync(folder, { recursive: true, force: true }),
    };
  }
  const base = process.env.SVC_TEST_POSTGRES_URL!;
  // Named by creation time (seconds, hex) and a random part, so a run drops only the schemas (and
  // databases) of runs long finished and leaves those of a run going on beside it alone.
  const created = Math.floor(Date.now() / 1000).toString(16).padStart(8, '0');
  const name = `t_${created}${randomBytes(4).toString('hex')}`;
  const url = new URL(base);
  if (options.migrated) {
    await createMigratedPostgres(base, name);
    url.pathname = `/${name}`;
    // A database of its own, unlike a schema, is dropped at once: no other database's catalogue
    // changes (resetPostgres drops those a killed run left, an hour on).
    const drop = async () => {
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      try {
        await admin.query(`drop database if exists ${name} with (force)`);
      } finally {
        await admin.end();
      }
    };
    return { kind, url: url.toString(), place: name, drop };
  }
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  await client.query(`create schema ${name}`);
  await client.end();
  url.searchParams.set('options', `-c search_path=${name}`);
  return {
    kind,
    url: url.toString(),
    place: name,
    // Kept until a later run (test/support/resetPostgres.ts drops those over an hour old): Kysely's
    // migrator reads the whole catalogue, and a schema dropped by another test process during
    // that read makes it fail.
    drop: async () => {},
  };
}

/**
 * Runs `work` on a fresh database opened by the service's own code and migrated to the latest
 * schema, then closes and drops it.
 */
export async function withMigratedDatabase(
  kind: DatabaseKind,
  work: (database: Database) => Promise<void>,
  options: { poolSize?: number } = {},
): Promise<void> {
  const testDb = await createTestDatabase(kind, { migrated: true });
  const database = openDatabase(testDb.url, { poolSize: options.poolSize ?? 2 });
  try {
    await work(database);
  } finally {
    await database.close();
    await testDb.drop();
  }
}

/** A projects row for tests that write to the database directly: no credentials, no callback. */
export function testProjectRow(id: string, overrides: Partial<ProjectRow> = {}): ProjectRow {
  return {
    id,
    name: id,
    owner_email: 'owner@example.com',
    provider_phone_number_id: null,
    provider_access_token_enc: null,
    callback_url: null,
    webhook_secret_enc: 'x',
    previous_webhook_secret_enc: null,
    previous_webhook_secret_expires_at: null,
    credentials_updated_at: null,
    provider_messages_per_second: null,
    created_at: 0,
    updated_at: 0,
    ...overrides,
  };
}
