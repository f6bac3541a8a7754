import type { Db } from '../db/database.ts';
import { type ErasedCounts, eraseProject } from '../db/projectErasure.ts';
import { errorOf } from '../errors.ts';

/** Erases the requester's project and all it holds, in the caller's transaction; what was erased. */
export async function eraseOwnProject(trx: Db, projectId: string, requesterKeyId: string): Promise<ErasedCounts> {
  const erased = await eraseProject(trx, projectId, requesterKeyId);
  if (erased === 'requester_revoked') throw errorOf('api_key_revoked');
  return erased;
}
