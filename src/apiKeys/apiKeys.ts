import { type ApiKeyRow, findApiKey, insertApiKeyWithinCap, listActiveApiKeys, revokeApiKey } from '../db/apiKeys.ts';
import type { Db } from '../db/database.ts';
import { generateApiKey, hashApiKey, visiblePrefix } from '../domain/apiKeys.ts';
import { newId } from '../domain/ids.ts';
import { DomainError, errorOf, notFound } from '../errors.ts';

// A project's API keys: created up to a cap, listed, revoked (never the last one). The writes run
// in the caller's transaction and check the requesting key under the same lock (lockActiveApiKeys).


/** A new key's row and its value (shown once, never stored). */
export function newApiKey(projectId: string, name: string, now: number): { row: ApiKeyRow; value: string } {
  const value = generateApiKey();
  const row: ApiKeyRow = {
    id: newId('key', now),
    project_id: projectId,
    name,
    prefix: visiblePrefix(value),
    key_hash: hashApiKey(value),
    created_at: now,
    last_used_at: null,
    revoked_at: null,
  };
  return { row, value };
}

/** Stores the key unless the project has `maxActive` active keys already. */
export async function createApiKey(trx: Db, row: ApiKeyRow, requesterKeyId: string, maxActive: number): Promise<void> {
  const outcome = await insertApiKeyWithinCap(trx, row, requesterKeyId, maxActive);
  if (outcome === 'requester_revoked') throw errorOf('api_key_revoked');
  if (outcome === 'limit_reached') {
    throw new DomainError('api_key_limit_reached', { max: maxActive });
  }
}

/** A page of the project's active keys, newest first (`limit + 1` rows). */
export function listApiKeys(db: Db, projectId: string, page: { limit: number; beforeId?: string | undefined }): Promise<ApiKeyRow[]> {
  return listActiveApiKeys(db, projectId, page);
}

/** Revokes the project's key `id`, unless it is its last active one; the revoked row. */
export async function revokeProjectApiKey(trx: Db, projectId: string, id: string, requesterKeyId: string, now: number): Promise<ApiKeyRow> {
  const outcome = await revokeApiKey(trx, projectId, id, requesterKeyId, now);
  if (outcome === 'requester_revoked') throw errorOf('api_key_revoked');
  if (outcome === 'not_found') throw notFound('active API key');
  if (outcome === 'last_active_key') throw new DomainError('last_active_key');
  return (await findApiKey(trx, projectId, id))!;
}
