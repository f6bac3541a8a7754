import type { Db } from './database.ts';

// Periodic jobs that must run in one worker process at a time, once per period across all of
// them (job_leases: one row per job, created by its migration). A process takes the run when it
// is due and nobody holds it (or the holder's lease ran out: it died mid-run), and ends it by
// setting when the next run is due.

export type LeasedJob = 'cost_reconciliation';

/** Takes the job's run for `holder` when it is due and free; false when another process has it or it is not due. */
export async function takeJobLease(db: Db, job: LeasedJob, holder: string, now: number, leaseMs: number): Promise<boolean> {
  const taken = await db
    .updateTable('job_leases')
    .set({ holder, lease_expires_at: now + leaseMs })
    .where('name', '=', job)
    .where('next_run_at', '<=', now)
    .where((eb) => eb.or([eb('holder', 'is', null), eb('lease_expires_at', '<=', now), eb('holder', '=', holder)]))
    .executeTakeFirst();
  return taken.numUpdatedRows > 0n;
}

/** Ends `holder`'s run: the lease is released and the next run (in any process) is due at `nextRunAt`. */
export async function finishJobLease(db: Db, job: LeasedJob, holder: string, nextRunAt: number): Promise<void> {
  await db
    .updateTable('job_leases')
    .set({ holder: null, lease_expires_at: 0, next_run_at: nextRunAt })
    .where('name', '=', job)
    .where('holder', '=', holder)
    .execute();
}

/** When the job's next run is due (for a process deciding how long to sleep). */
export async function jobNextRunAt(db: Db, job: LeasedJob): Promise<number | undefined> {
  const row = await db.selectFrom('job_leases').select(['next_run_at', 'lease_expires_at', 'holder']).where('name', '=', job).executeTakeFirst();
  if (!row) return undefined;
  return row.holder === null ? Number(row.next_run_at) : Math.max(Number(row.next_run_at), Number(row.lease_expires_at));
}
