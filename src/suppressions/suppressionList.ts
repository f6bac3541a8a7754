import type { Db } from '../db/database.ts';
import { addSuppressions, deleteSuppression, findSuppression, listSuppressions, type SuppressionRow, widenSuppression } from '../db/suppressions.ts';
import { errorOf } from '../errors.ts';

// The project's suppression list as its owner edits it: add (or widen) a number, read, remove.

/** Suppresses the number for every send; whether it was added (false: it was listed already). */
export async function suppressNumber(
  trx: Db,
  projectId: string,
  phoneNumber: string,
  reason: string | null,
  now: number,
): Promise<{ added: boolean; row: SuppressionRow }> {
  const entry = { projectId, phoneNumber, reason, source: 'api' as const };
  const added = (await addSuppressions(trx, [entry], now)).length > 0;
  // A marketing-only suppression (Meta's marketing opt-out) becomes one of every send.
  if (!added) await widenSuppression(trx, entry);
  return { added, row: (await findSuppression(trx, projectId, phoneNumber))! };
}

/** A page of the list, newest first. */
export function listSuppressedNumbers(db: Db, projectId: string, page: { limit: number; beforeId?: string | undefined }) {
  return listSuppressions(db, projectId, page);
}

export async function getSuppression(db: Db, projectId: string, phoneNumber: string): Promise<SuppressionRow> {
  const row = await findSuppression(db, projectId, phoneNumber);
  if (!row) throw errorOf('number_not_suppressed');
  return row;
}

export async function unsuppressNumber(trx: Db, projectId: string, phoneNumber: string): Promise<void> {
  if (!(await deleteSuppression(trx, projectId, phoneNumber))) throw errorOf('number_not_suppressed');
}
