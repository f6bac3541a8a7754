import type { ProviderAccount } from '../providers/provider.ts';
import type { Db } from './database.ts';
import type { ProviderAccountsTable } from './tables.ts';

// What the provider says of each project's sending number and business account: written with the
// credentials (PUT provider-credentials), refreshed by the provider-account job. A refresh only
// lands while the credentials it checked are still the project's (credentials_updated_at).

export type ProviderAccountRow = ProviderAccountsTable;

/** How often an account is checked again. */
export const PROVIDER_ACCOUNT_REFRESH_MS = 60 * 60_000;

type AccountColumns = Pick<
  ProviderAccountRow,
  'business_account_id' | 'display_phone_number' | 'verified_name' | 'quality_rating' | 'webhooks_subscribed' | 'problem' | 'currency'
>;

/** The columns an account check fills. */
export function accountColumns(account: ProviderAccount): AccountColumns {
  return {
    business_account_id: account.businessAccountId,
    display_phone_number: account.displayPhoneNumber,
    verified_name: account.verifiedName,
    quality_rating: account.qualityRating,
    webhooks_subscribed: account.webhooksSubscribed ? 1 : 0,
    problem: account.problem ? JSON.stringify(account.problem) : null,
    currency: account.currency ?? null,
  };
}

export async function findProviderAccount(db: Db, projectId: string): Promise<ProviderAccountRow | undefined> {
  return db.selectFrom('provider_accounts').selectAll().where('project_id', '=', projectId).executeTakeFirst();
}

/** Saves the account of newly saved credentials, with the number's throughput (null: SVC_PROVIDER_MAX_MPS). */
export async function saveProviderAccount(db: Db, row: ProviderAccountRow, messagesPerSecond: number | null): Promise<void> {
  await db
    .insertInto('provider_accounts')
    .values(row)
    .onConflict((conflict) => conflict.column('project_id').doUpdateSet(row))
    .execute();
  await db.updateTable('projects').set({ provider_messages_per_second: messagesPerSecond }).where('id', '=', row.project_id).execute();
}

export type AccountRefresh = Partial<Omit<ProviderAccountRow, 'project_id' | 'credentials_updated_at'>> & {
  check_due_at: number;
};

/**
 * Records a refresh of the account checked with the credentials of `credentialsUpdatedAt`; when
 * the project has saved other credentials meanwhile, it changes nothing (false). The throughput
 * is written only when given.
 */
export async function recordProviderAccountRefresh(
  db: Db,
  projectId: string,
  credentialsUpdatedAt: number,
  changes: AccountRefresh,
  messagesPerSecond?: number | null,
): Promise<boolean> {
  const work = async (trx: Db) => {
    const result = await trx
      .updateTable('provider_accounts')
      .set(changes)
      .where('project_id', '=', projectId)
      .where('credentials_updated_at', '=', credentialsUpdatedAt)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return false;
    if (messagesPerSecond !== undefined) {
      await trx.updateTable('projects').set({ provider_messages_per_second: messagesPerSecond }).where('id', '=', projectId).execute();
    }
    return true;
  };
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/**
 * Claims up to `limit` accounts due for a refresh: each is moved `leaseMs` ahead by a conditional
 * update, so of concurrent workers only one takes it, and a worker that dies mid-check leaves it
 * due again when the lease runs out.
 */
export async function claimDueProviderAccounts(
  db: Db,
  options: { now: number; limit: number; leaseMs: number },
): Promise<ProviderAccountRow[]> {
  const due = await db
    .selectFrom('provider_accounts')
    .selectAll()
    .where('check_due_at', '<=', options.now)
    .orderBy('check_due_at')
    .limit(options.limit)
    .execute();
  const claimed: ProviderAccountRow[] = [];
  for (const row of due) {
    const result = await db
      .updateTable('provider_accounts')
      .set({ check_due_at: options.now + options.leaseMs })
      .where('project_id', '=', row.project_id)
      .where('check_due_at', '=', row.check_due_at)
      .executeTakeFirst();
    if (result.numUpdatedRows > 0n) claimed.push(row);
  }
  return claimed;
}

export async function nextProviderAccountCheckAt(db: Db): Promise<number | undefined> {
  const row = await db
    .selectFrom('provider_accounts')
    .select((eb) => eb.fn.min('check_due_at').as('next'))
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}

/** Makes every account of a business account due now (the provider announced a change, e.g. a throughput upgrade). */
export async function makeBusinessAccountDue(db: Db, businessAccountId: string, now: number): Promise<number> {
  const result = await db
    .updateTable('provider_accounts')
    .set({ check_due_at: now })
    .where('business_account_id', '=', businessAccountId)
    .where('check_due_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Whether some project here sends through this business account (its credentials name it). */
export async function isKnownBusinessAccount(db: Db, businessAccountId: string): Promise<boolean> {
  const row = await db.selectFrom('provider_accounts').select('project_id').where('business_account_id', '=', businessAccountId).limit(1).executeTakeFirst();
  return row !== undefined;
}
