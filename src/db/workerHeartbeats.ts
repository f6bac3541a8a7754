import { sql } from 'kysely';
import type { Db } from './database.ts';

/** Records that this worker looked for due messages to claim just now. */
export async function recordWorkerHeartbeat(db: Db, workerId: string, now: number): Promise<void> {
  await db
    .insertInto('worker_heartbeats')
    .values({ worker_id: workerId, claimed_at: now })
    .onConflict((conflict) => conflict.column('worker_id').doUpdateSet({ claimed_at: now }))
    .execute();
}

/** The last time any worker looked for due messages to claim, if any ever did. */
export async function lastWorkerHeartbeat(db: Db): Promise<number | undefined> {
  const result = await sql<{ last: number | string | null }>`select max(claimed_at) as last from worker_heartbeats`.execute(db);
  const last = result.rows[0]?.last;
  return last === null || last === undefined ? undefined : Number(last);
}

/** Heartbeats of workers gone for longer than `olderThan` ms are forgotten. */
export async function forgetWorkerHeartbeats(db: Db, before: number): Promise<void> {
  await db.deleteFrom('worker_heartbeats').where('claimed_at', '<', before).execute();
}
