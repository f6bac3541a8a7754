import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { MessageCostsTable } from './tables.ts';

// Cost counters: per project, UTC day of delivery, template, pricing category, country, market
// and currency, the messages charged with their amount (millionths of the currency unit), the
// free ones and those the rate card had no rate for. Written in the transaction that records a
// delivery (workers/messageReports.ts); read a range of days at a time through the primary key,
// so an answer costs the rows of its days, not the project's messages.

export const DAY_MS = 86_400_000;

export type CostKey = Pick<MessageCostsTable, 'project_id' | 'day' | 'template' | 'category' | 'country' | 'market' | 'currency'>;
export type CostDelta = CostKey & Pick<MessageCostsTable, 'charged' | 'amount_micros' | 'free' | 'unpriced'>;

const KEY_COLUMNS = ['project_id', 'day', 'template', 'category', 'country', 'market', 'currency'] as const;

/** Adds these deltas (negative to take back a charge Meta corrected), summed per key, in key order. */
export async function addCosts(trx: Db, deltas: readonly CostDelta[]): Promise<void> {
  const byKey = new Map<string, CostDelta>();
  for (const delta of deltas) {
    const key = JSON.stringify(KEY_COLUMNS.map((column) => delta[column]));
    const sum = byKey.get(key);
    if (!sum) byKey.set(key, { ...delta });
    else {
      sum.charged += delta.charged;
      sum.amount_micros += delta.amount_micros;
      sum.free += delta.free;
      sum.unpriced += delta.unpriced;
    }
  }
  // The same order in every transaction: two upserting the same rows never wait in a cycle.
  const rows = [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
  for (let i = 0; i < rows.length; i += 200) {
    await trx
      .insertInto('message_costs')
      .values(rows.slice(i, i + 200))
      .onConflict((oc) =>
        oc.columns([...KEY_COLUMNS]).doUpdateSet({
          charged: sql`message_costs.charged + excluded.charged`,
          amount_micros: sql`message_costs.amount_micros + excluded.amount_micros`,
          free: sql`message_costs.free + excluded.free`,
          unpriced: sql`message_costs.unpriced + excluded.unpriced`,
        }),
      )
      .execute();
  }
}

export type CostDimension = 'day' | 'template' | 'category' | 'market' | 'country';

export interface CostGroup {
  keys: Partial<Record<CostDimension, string | number>>;
  currency: string;
  charged: number;
  amountMicros: number;
  free: number;
  unpriced: number;
}

/**
 * The project's costs over the days in [from, to) (day starts), summed by the dimensions given
 * (and always by currency: amounts in two currencies are never added up).
 */
export async function readCosts(
  db: Db,
  projectId: string,
  range: { from: number; to: number; by: readonly CostDimension[] },
): Promise<CostGroup[]> {
  const columns = range.by.map((dimension) => sql.ref(dimension));
  const selected = columns.length === 0 ? sql`` : sql`${sql.join(columns)}, `;
  const grouped = columns.length === 0 ? sql`currency` : sql`${sql.join(columns)}, currency`;
  const result = await sql<Record<string, string | number>>`
    select ${selected}currency, sum(charged) as charged, sum(amount_micros) as amount_micros, sum(free) as free, sum(unpriced) as unpriced
    from message_costs
    where project_id = ${projectId} and day >= ${range.from} and day < ${range.to}
    group by ${grouped}`.execute(db);
  return result.rows.map((row) => ({
    keys: Object.fromEntries(range.by.map((dimension) => [dimension, dimension === 'day' ? Number(row[dimension]) : String(row[dimension])])),
    currency: String(row.currency),
    charged: Number(row.charged),
    amountMicros: Number(row.amount_micros),
    free: Number(row.free),
    unpriced: Number(row.unpriced),
  }));
}

/**
 * Up to `limit` of the project's counter rows of days before `before` go, and its reconciliations
 * of those days (one row a day); returns how many rows went and whether more counter rows remain.
 */
export async function expireCosts(trx: Db, projectId: string, before: number, limit: number): Promise<{ deleted: number; more: boolean }> {
  const old = await trx
    .selectFrom('message_costs')
    .select([...KEY_COLUMNS])
    .where('project_id', '=', projectId)
    .where('day', '<', before)
    .orderBy('day')
    .limit(limit)
    .execute();
  for (const row of old) {
    let query = trx.deleteFrom('message_costs').where('project_id', '=', projectId);
    for (const column of KEY_COLUMNS) query = query.where(column, '=', row[column] as never);
    await query.execute();
  }
  const reconciled = await trx.deleteFrom('cost_reconciliations').where('project_id', '=', projectId).where('day', '<', before).executeTakeFirst();
  return { deleted: old.length + Number(reconciled.numDeletedRows), more: old.length === limit };
}
