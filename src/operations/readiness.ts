import type { Db } from '../db/database.ts';
import { isSchemaCurrent } from '../db/migrate.ts';
import { pingDatabase } from '../db/ping.ts';
import { DomainError } from '../errors.ts';
import { dispatchStall } from '../workers/messageQueueHealth.ts';

/** Ready: the database answers, its schema is current and workers claim due messages; else `unavailable`. */
export async function checkReadiness(db: Db, now: number, workerStallMs: number): Promise<void> {
  try {
    await pingDatabase(db);
  } catch {
    throw new DomainError('unavailable', 'The database does not answer.', { headers: { 'retry-after': '1' } });
  }
  if (!(await isSchemaCurrent(db))) {
    throw new DomainError('unavailable', 'The database schema is not the one this code expects.');
  }
  const stall = await dispatchStall(db, now, workerStallMs);
  if (stall) throw new DomainError('unavailable', stall);
}
