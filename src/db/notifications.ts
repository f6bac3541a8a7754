import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from './database.ts';
import { dialectOf } from './prepared.ts';

// The database's own notifications (PostgreSQL's LISTEN/NOTIFY), which wake other processes'
// workers. SQLite has one process: its wakes stay in memory (workers/notifier.ts).

const PREFIX = 'svc_';

/** Whether committed work is announced through the database to other processes (PostgreSQL). */
export function notifiesAcrossProcesses(db: Db): boolean {
  return dialectOf(db) === 'postgres';
}

/**
 * Channels are per database, not per schema: they are named after the schema (a short hash of
 * its name), so two deployments in two schemas of one database never wake each other.
 */
export async function channelPrefix(db: Db): Promise<string> {
  const result = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return `${PREFIX}${createHash('sha256').update(result.rows[0]!.schema).digest('hex').slice(0, 12)}_`;
}

/** Notifies `channel` at the commit of the caller's transaction (delivered only then). */
export async function notifyAtCommit(trx: Db, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(trx);
}
