import type { Db } from './database.ts';
import type { IdempotencyKeysTable } from './tables.ts';

export type IdempotencyRecord = IdempotencyKeysTable;

/** The live record of a key (expired ones count as absent). */
export async function findIdempotencyRecord(
  db: Db,
  projectId: string,
  key: string,
  now: number,
): Promise<IdempotencyRecord | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('key', '=', key)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * Inserts records, replacing expired ones; returns the keys that were written. A key whose live
 * record exists (committed by a concurrent request) is left alone and not returned: the unique
 * index, not luck, decides which request owns a key.
 */
export async function claimIdempotencyKeys(db: Db, rows: IdempotencyRecord[], now: number): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const written = await db
    .insertInto('idempotency_keys')
    .values(rows)
    .onConflict((conflict) =>
      conflict
        .columns(['project_id', 'key'])
        .doUpdateSet((eb) => ({
          request_hash: eb.ref('excluded.request_hash'),
          message_id: eb.ref('excluded.message_id'),
          response_status: eb.ref('excluded.response_status'),
          response_body: eb.ref('excluded.response_body'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where('idempotency_keys.expires_at', '<=', now),
    )
    .returning(['project_id', 'key'])
    .execute();
  return new Set(written.map((row) => `${row.project_id}\n${row.key}`));
}

export async function purgeExpiredIdempotencyKeys(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
