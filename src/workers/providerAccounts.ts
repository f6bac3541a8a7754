import { findProject } from '../db/projects.ts';
import {
  accountColumns,
  claimDueProviderAccounts,
  nextProviderAccountCheckAt,
  PROVIDER_ACCOUNT_REFRESH_MS,
  type ProviderAccountRow,
  recordProviderAccountRefresh,
} from '../db/providerAccounts.ts';
import { providerCredentialsOf } from '../projectSecrets.ts';
import type { WorkerDeps } from './deps.ts';
import type { Job } from './loop.ts';

// Keeps each project's provider account current: the number's throughput (which paces the
// dispatcher), quality rating and names, the webhook subscription (subscribed again if it was
// lost), and any problem the customer must fix, such as a token that has since expired.

/** After an outage, ask again sooner. */
const RETRY_AFTER_OUTAGE_MS = 5 * 60_000;
/** A claimed account is due again after this long if its worker dies mid-check. */
const LEASE_MS = 5 * 60_000;
const BATCH = 20;

export function createProviderAccountJob(deps: Pick<WorkerDeps, 'database' | 'provider' | 'encryptionKey' | 'logger'>): Job {
  const { db } = deps.database;

  async function refresh(row: ProviderAccountRow, now: number): Promise<void> {
    const project = await findProject(db, row.project_id);
    const credentials = project ? providerCredentialsOf(project, deps.encryptionKey) : undefined;
    if (!project || !credentials) return;
    const check = await deps.provider.checkAccount({
      credentials,
      businessAccountId: row.business_account_id,
      businessAccountKnown: row.business_account_id !== null,
    });
    const at = row.credentials_updated_at;
    if (check.kind === 'unavailable') {
      await recordProviderAccountRefresh(db, row.project_id, at, { check_due_at: now + RETRY_AFTER_OUTAGE_MS });
      return;
    }
    const due = { checked_at: now, check_due_at: now + PROVIDER_ACCOUNT_REFRESH_MS };
    if (check.kind === 'rejected') {
      const problem = JSON.stringify({ code: check.code, message: `${check.reason} (${check.error.code}: ${check.error.message})` });
      await recordProviderAccountRefresh(db, row.project_id, at, { ...due, problem });
      return;
    }
    // A currency Meta did not show this time keeps the one read before (a WABA's currency never changes).
    const { currency, ...columns } = accountColumns(check.account);
    const changes = { ...columns, ...(currency !== null && { currency }), ...due };
    await recordProviderAccountRefresh(db, row.project_id, at, changes, check.account.messagesPerSecond);
  }

  return {
    name: 'provider-accounts',
    async runOnce(now) {
      const due = await claimDueProviderAccounts(db, { now, limit: BATCH, leaseMs: LEASE_MS });
      for (const row of due) {
        try {
          await refresh(row, now);
        } catch (error) {
          deps.logger.warn({ err: error, projectId: row.project_id }, 'provider account refresh failed; will retry');
        }
      }
      return { handled: due.length, nextDueAt: await nextProviderAccountCheckAt(db) };
    },
  };
}
