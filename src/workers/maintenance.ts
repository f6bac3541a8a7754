import { purgeExpiredIdempotencyKeys } from '../db/idempotencyKeys.ts';
import type { WorkerDeps } from './deps.ts';
import type { Job } from './loop.ts';

const EVERY_MS = 10 * 60_000;

/** Housekeeping: idempotency records older than their 24-hour window are deleted. */
export function createMaintenanceJob(deps: WorkerDeps): Job {
  let nextRunAt = 0;
  return {
    name: 'maintenance',
    async runOnce(now) {
      if (now >= nextRunAt) {
        nextRunAt = now + EVERY_MS;
        const purged = await purgeExpiredIdempotencyKeys(deps.database.db, now);
        if (purged > 0) deps.logger.info({ purged }, 'expired idempotency keys purged');
      }
      return { handled: 0, nextDueAt: nextRunAt };
    },
  };
}
