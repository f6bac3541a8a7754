import type { Db } from './database.ts';
import type { CostReconciliationsTable } from './tables.ts';

// The reconciliation job's results: per project and UTC day, Meta's pricing_analytics totals
// beside svc's counters and the differences (JSON). One row per day, replaced at each check.

export type CostReconciliationRow = CostReconciliationsTable;

export async function saveReconciliation(db: Db, row: CostReconciliationRow): Promise<void> {
  const { project_id: _project, day: _day, ...changes } = row;
  await db
    .insertInto('cost_reconciliations')
    .values(row)
    .onConflict((oc) => oc.columns(['project_id', 'day']).doUpdateSet(changes))
    .execute();
}

/** The project's checked days in [from, to), oldest first (at most 366: the route's range). */
export async function listReconciliations(db: Db, projectId: string, range: { from: number; to: number }): Promise<CostReconciliationRow[]> {
  return db
    .selectFrom('cost_reconciliations')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('day', '>=', range.from)
    .where('day', '<', range.to)
    .orderBy('day')
    .limit(400)
    .execute();
}

/** Projects whose provider account names a WhatsApp Business Account (and its currency, when known), a page at a time in id order. */
export async function accountsToReconcile(
  db: Db,
  after: string,
  limit: number,
): Promise<{ project_id: string; business_account_id: string; currency: string | null }[]> {
  const rows = await db
    .selectFrom('provider_accounts')
    .select(['project_id', 'business_account_id', 'currency'])
    .where('business_account_id', 'is not', null)
    .where('project_id', '>', after)
    .orderBy('project_id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ project_id: row.project_id, business_account_id: row.business_account_id!, currency: row.currency ?? null }));
}
