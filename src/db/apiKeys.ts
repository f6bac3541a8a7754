import type { Db } from './database.ts';
import { dialectOf, postgresStatement, statement } from './prepared.ts';
import type { ApiKeysTable } from './tables.ts';

export type ApiKeyRow = ApiKeysTable;

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export interface KeyForRequest {
  id: string;
  project_id: string;
  revoked_at: number | null;
  /** The project's operator switch (svc projects disable), read in the same lookup. */
  project_disabled_at: number | null;
}

const KEY_BY_HASH_SQL =
  'select k.id, k.project_id, k.revoked_at, p.disabled_at as project_disabled_at ' +
  'from api_keys k join projects p on p.id = k.project_id where k.key_hash = ?';
const KEY_BY_HASH = statement<KeyForRequest>(KEY_BY_HASH_SQL);

/** The key with this hash, active or not, and whether its project is disabled: the one query every authenticated request makes. */
export async function findApiKeyByHash(db: Db, keyHash: string): Promise<KeyForRequest | undefined> {
  return (await KEY_BY_HASH.rows(db, [keyHash]))[0];
}

/** The key's columns on each row of a key-checked read, named so they never meet the read's own. */
export interface KeyCheckColumns {
  svc_key_id: string;
  svc_key_project_id: string;
  svc_key_revoked_at: number | null;
  svc_key_project_disabled_at: number | null;
}

/**
 * A read and the lookup of the request's key in one statement (one round trip on PostgreSQL where
 * two were): its parameters are the key's hash, then the read's. No row at all when no key has
 * that hash; otherwise the key's state on every row, beside the read's columns — all null on the
 * one row there is when the read found nothing. `orderBy` orders the rows again (a join keeps no
 * order): the read runs once, on its own, then is joined to the key's one row. (A plain join of
 * the key and the table would have PostgreSQL sort every row of the project before the limit.)
 */
export function keyCheckedSql(read: string, orderBy?: string): string {
  return (
    'select svc_key.id as svc_key_id, svc_key.project_id as svc_key_project_id, svc_key.revoked_at as svc_key_revoked_at, ' +
    `svc_key.project_disabled_at as svc_key_project_disabled_at, r.* from (${KEY_BY_HASH_SQL}) svc_key ` +
    `left join (${read}) r on 1 = 1${orderBy === undefined ? '' : ` order by ${orderBy}`}`
  );
}

/** The key a key-checked read found, as findApiKeyByHash would have; undefined: no such key. */
export function keyOfCheckedRows(rows: readonly KeyCheckColumns[]): KeyForRequest | undefined {
  const row = rows[0];
  return (
    row && {
      id: row.svc_key_id,
      project_id: row.svc_key_project_id,
      revoked_at: row.svc_key_revoked_at,
      project_disabled_at: row.svc_key_project_disabled_at,
    }
  );
}

/**
 * Whether the key is still active and its project enabled, read inside a write transaction. On
 * PostgreSQL the key row (only) is share-locked, so a revocation either commits before this (and
 * we see it) or waits for our commit: no write commits after its key's revocation.
 */
export async function isApiKeyActive(db: Db, keyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('projects', 'projects.id', 'api_keys.project_id')
    .select('api_keys.id')
    .where('api_keys.id', '=', keyId)
    .where('api_keys.revoked_at', 'is', null)
    .where('projects.disabled_at', 'is', null)
    .$if(dialectOf(db) === 'postgres', (query) => query.forShare('api_keys'))
    .executeTakeFirst();
  return row !== undefined;
}

/** A page of the project's active keys, newest first: `limit + 1` rows, so the caller sees whether more follow. */
export async function listActiveApiKeys(
  db: Db,
  projectId: string,
  page: { limit: number; beforeId?: string | undefined },
): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('revoked_at', 'is', null)
    .$if(page.beforeId !== undefined, (query) => query.where('id', '<', page.beforeId!))
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}

/**
 * Locks the project's active keys (PostgreSQL), in id order, and returns their ids; none while the
 * project is disabled. Every write that changes which keys are active takes this lock first, so
 * such writes serialise per project and never deadlock, and a request's own key is checked under it.
 */
export async function lockActiveApiKeys(db: Db, projectId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('api_keys')
    .innerJoin('projects', 'projects.id', 'api_keys.project_id')
    .select('api_keys.id')
    .where('api_keys.project_id', '=', projectId)
    .where('api_keys.revoked_at', 'is', null)
    .where('projects.disabled_at', 'is', null)
    .orderBy('api_keys.id')
    .$if(dialectOf(db) === 'postgres', (query) => query.forUpdate('api_keys'))
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Inserts a key unless the project already has `maxActive` active keys. The count is taken under
 * the lock of lockActiveApiKeys, in a statement of its own (one that sees keys committed while we
 * waited for the lock), so two creations racing at the cap cannot both succeed.
 */
export async function insertApiKeyWithinCap(
  db: Db,
  row: ApiKeyRow,
  requesterKeyId: string,
  maxActive: number,
): Promise<'created' | 'requester_revoked' | 'limit_reached'> {
  const locked = await lockActiveApiKeys(db, row.project_id);
  if (!locked.includes(requesterKeyId)) return 'requester_revoked';
  const { count } = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('project_id', '=', row.project_id)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  if (Number(count) >= maxActive) return 'limit_reached';
  await insertApiKey(db, row);
  return 'created';
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
 * Revokes an active key unless it is the project's last. Under lockActiveApiKeys, so concurrent
 * revocations serialise instead of deadlocking and cannot leave the project with none.
 */
export async function revokeApiKey(
  db: Db,
  projectId: string,
  id: string,
  requesterKeyId: string,
  now: number,
): Promise<'revoked' | 'not_found' | 'last_active_key' | 'requester_revoked'> {
  const active = await lockActiveApiKeys(db, projectId);
  if (!active.includes(requesterKeyId)) return 'requester_revoked';
  if (!active.includes(id)) return 'not_found';
  if (active.length === 1) return 'last_active_key';
  await db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).execute();
  return 'revoked';
}

export async function recordApiKeyUse(db: Db, ids: string[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('api_keys').set({ last_used_at: now }).where('id', 'in', ids).execute();
}

export interface ActiveKey {
  projectId: string;
  /** Whether the key's project has saved both provider credentials. */
  providerConfigured: boolean;
  /** The project's suppression_version (db/suppressions.ts): a send checked against another is checked again. */
  suppressionVersion: number;
}

const ACTIVE_KEY_SQLITE = statement<{ id: string; project_id: string; configured: number; suppression_version: number }>(
  'select k.id, k.project_id, (p.provider_phone_number_id is not null and p.provider_access_token_enc is not null) as configured, ' +
    'p.suppression_version ' +
    'from api_keys k join projects p on p.id = k.project_id ' +
    'where k.id = ? and k.revoked_at is null and p.disabled_at is null',
);
const ACTIVE_KEYS_POSTGRES = postgresStatement<{ id: string; project_id: string; configured: boolean; suppression_version: number }>(
  'select k.id, k.project_id, (p.provider_phone_number_id is not null and p.provider_access_token_enc is not null) as configured, ' +
    'p.suppression_version ' +
    'from api_keys k join projects p on p.id = k.project_id ' +
    'where k.id = any($1::text[]) and k.revoked_at is null and p.disabled_at is null ' +
    'order by k.id for share of k',
);

/**
 * The active keys among these, with what a write of theirs needs to know of the project, read
 * inside the write's transaction; on PostgreSQL the key rows (only) are share-locked, so a
 * revocation either commits before this (and we see it) or waits for our commit.
 */
export async function activeKeysForWrite(db: Db, ids: readonly string[]): Promise<Map<string, ActiveKey>> {
  const active = new Map<string, ActiveKey>();
  if (ids.length === 0) return active;
  const rows =
    dialectOf(db) === 'postgres'
      ? await ACTIVE_KEYS_POSTGRES.rows(db, [ids])
      : (await Promise.all([...ids].sort().map((id) => ACTIVE_KEY_SQLITE.rows(db, [id])))).flat();
  for (const row of rows) {
    active.set(row.id, {
      projectId: row.project_id,
      providerConfigured: Boolean(row.configured),
      suppressionVersion: Number(row.suppression_version),
    });
  }
  return active;
}
