import type { Db, DialectName } from './database.ts';
import type { ApiKeysTable } from './tables.ts';

export type ApiKeyRow = ApiKeysTable;

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

/** The key with this hash, active or not: the one query every authenticated request makes. */
export async function findApiKeyByHash(
  db: Db,
  keyHash: string,
): Promise<Pick<ApiKeyRow, 'id' | 'project_id' | 'revoked_at'> | undefined> {
  return db
    .selectFrom('api_keys')
    .select(['id', 'project_id', 'revoked_at'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
}

/**
 * Whether the key is still active, read inside a write transaction. On PostgreSQL the row is
 * share-locked, so a revocation either commits before this (and we see it) or waits for our
 * commit: no write commits after its key's revocation.
 */
export async function isApiKeyActive(db: Db, dialect: DialectName, keyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select('revoked_at')
    .where('id', '=', keyId)
    .$if(dialect === 'postgres', (query) => query.forShare())
    .executeTakeFirst();
  return row !== undefined && row.revoked_at === null;
}

export async function listActiveApiKeys(db: Db, projectId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('revoked_at', 'is', null)
    .orderBy('id', 'desc')
    .execute();
}

export async function findApiKey(db: Db, projectId: string, id: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Revokes an active key unless it is the project's last. Locks the project's active keys first,
 * in id order (PostgreSQL), so concurrent revocations serialise instead of deadlocking and cannot
 * leave the project with none; the requester's own key is checked under the same lock.
 */
export async function revokeApiKey(
  db: Db,
  dialect: DialectName,
  projectId: string,
  id: string,
  requesterKeyId: string,
  now: number,
): Promise<'revoked' | 'not_found' | 'last_active_key' | 'requester_revoked'> {
  const active = await db
    .selectFrom('api_keys')
    .select('id')
    .where('project_id', '=', projectId)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .$if(dialect === 'postgres', (query) => query.forUpdate())
    .execute();
  if (!active.some((key) => key.id === requesterKeyId)) return 'requester_revoked';
  if (!active.some((key) => key.id === id)) return 'not_found';
  if (active.length === 1) return 'last_active_key';
  await db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).execute();
  return 'revoked';
}

export async function recordApiKeyUse(db: Db, ids: string[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('api_keys').set({ last_used_at: now }).where('id', 'in', ids).execute();
}

/** Which of these keys are still active, read (and share-locked on PostgreSQL) inside a write. */
export async function activeApiKeyIds(db: Db, dialect: DialectName, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('api_keys')
    .select('id')
    .where('id', 'in', ids)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .$if(dialect === 'postgres', (query) => query.forShare())
    .execute();
  return new Set(rows.map((row) => row.id));
}
