import type { Db } from './database.ts';
import { statement } from './prepared.ts';
import type { BatchesTable, MessageStatus } from './tables.ts';

export type BatchRow = BatchesTable;

export async function insertBatch(db: Db, row: BatchRow): Promise<void> {
  await db.insertInto('batches').values(row).execute();
}

export async function findBatch(db: Db, projectId: string, id: string): Promise<BatchRow | undefined> {
  return db.selectFrom('batches').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

/** A page of the project's batches, newest first: `limit + 1` rows after the cursor. */
export async function listBatches(db: Db, projectId: string, page: { limit: number; beforeId?: string }): Promise<BatchRow[]> {
  return db
    .selectFrom('batches')
    .selectAll()
    .where('project_id', '=', projectId)
    .$if(page.beforeId !== undefined, (query) => query.where('id', '<', page.beforeId!))
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

// A batch holds at most 1,000 messages: its slice of the (batch_id, status) index is that long at
// most, so counting it costs the same whatever the project's size.
const STATUS_COUNTS = statement<{ batch_id: string; status: MessageStatus; n: number | string }>(
  'select batch_id, status, count(*) as n from messages where project_id = ? and batch_id = ? group by batch_id, status',
);

/** How many of each batch's messages are in each status now. */
export async function batchStatusCounts(
  db: Db,
  projectId: string,
  batchIds: readonly string[],
): Promise<Map<string, Partial<Record<MessageStatus, number>>>> {
  const counts = new Map<string, Partial<Record<MessageStatus, number>>>();
  const results = await Promise.all(batchIds.map((id) => STATUS_COUNTS.rows(db, [projectId, id])));
  for (const row of results.flat()) {
    const batch = counts.get(row.batch_id) ?? {};
    batch[row.status] = Number(row.n);
    counts.set(row.batch_id, batch);
  }
  return counts;
}
