import { type BatchRow, batchStatusCounts, findBatch, listBatches } from '../db/batches.ts';
import type { Db } from '../db/database.ts';
import type { MessageStatus } from '../db/tables.ts';
import { notFound } from '../errors.ts';

// Reading a project's batches (sending one is src/sending/sendMessages.ts): each with how many of
// its messages are in each status now.

export type BatchCounts = Partial<Record<MessageStatus, number>>;

/** A page of the project's batches, newest first (`limit + 1` rows). */
export function listProjectBatches(db: Db, projectId: string, page: { limit: number; beforeId?: string }): Promise<BatchRow[]> {
  return listBatches(db, projectId, page);
}

/** How many messages of each of these batches are in each status. */
export function countsOfBatches(db: Db, projectId: string, batchIds: readonly string[]): Promise<Map<string, BatchCounts>> {
  return batchStatusCounts(db, projectId, batchIds);
}

export async function getBatch(db: Db, projectId: string, id: string): Promise<{ batch: BatchRow; counts: BatchCounts | undefined }> {
  const batch = await findBatch(db, projectId, id);
  if (!batch) throw notFound('batch');
  const counts = await batchStatusCounts(db, projectId, [batch.id]);
  return { batch, counts: counts.get(batch.id) };
}
