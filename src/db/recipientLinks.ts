import type { Db } from './database.ts';

// Identities of one WhatsApp user in a project, joined: a phone number and its business-scoped
// user ids (BSUIDs), an old BSUID and the new one Meta announced (`user_changed_user_id`). One row
// per ordered pair, so whichever identity a lookup starts from, it is one primary-key range. A
// user has few identities (a phone, a BSUID, perhaps a parent BSUID and a replaced one): a group
// is kept whole (every pair) and capped, so a lookup never needs more than one hop.

export type LinkSource = 'status' | 'inbound' | 'user_changed_user_id';

/** The most identities joined into one group: beyond it, a new identity is not joined (a bound on rows, whatever arrives). */
export const MAX_LINKED = 16;

/** Every identity linked to each of these (absent: none). */
export async function linkedIdentities(db: Db, projectId: string, identities: readonly string[]): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  if (identities.length === 0) return found;
  const rows = await db
    .selectFrom('recipient_links')
    .select(['identity', 'linked'])
    .where('project_id', '=', projectId)
    .where('identity', 'in', [...new Set(identities)])
    .execute();
  for (const row of rows) found.set(row.identity, [...(found.get(row.identity) ?? []), row.linked]);
  return found;
}

/** These identities with every identity linked to them. */
export async function withLinkedIdentities(db: Db, projectId: string, identities: readonly string[]): Promise<string[]> {
  const linked = await linkedIdentities(db, projectId, identities);
  return [...new Set([...identities, ...[...linked.values()].flat()])];
}

/**
 * Joins `a` and `b` (and everything already linked to either) into one group, in the caller's
 * transaction; a pair already known is only marked seen. Returns false when the group would grow
 * beyond MAX_LINKED (nothing is joined then).
 */
export async function linkIdentities(db: Db, projectId: string, a: string, b: string, source: LinkSource, now: number): Promise<boolean> {
  if (a === b) return true;
  // Sorted: transactions that join the same identities write their rows in one order (no deadlock).
  const group = (await withLinkedIdentities(db, projectId, [a, b])).sort();
  if (group.length > MAX_LINKED) return false;
  const rows = group.flatMap((identity) =>
    group.filter((linked) => linked !== identity).map((linked) => ({ project_id: projectId, identity, linked, source, created_at: now, seen_at: now })),
  );
  await db
    .insertInto('recipient_links')
    .values(rows)
    .onConflict((conflict) => conflict.columns(['project_id', 'identity', 'linked']).doUpdateSet({ seen_at: now }))
    .execute();
  return true;
}

/**
 * Removes about `limit` of the project's links last seen before `cutoff` (retention), oldest
 * first through (project_id, seen_at): everything up to the limit-th oldest's time, so ties at
 * that time go together. How many went.
 */
export async function deleteStaleLinks(db: Db, projectId: string, cutoff: number, limit: number): Promise<number> {
  const last = await db
    .selectFrom('recipient_links')
    .select('seen_at')
    .where('project_id', '=', projectId)
    .where('seen_at', '<', cutoff)
    .orderBy('seen_at')
    .offset(limit - 1)
    .limit(1)
    .executeTakeFirst();
  const result = await db
    .deleteFrom('recipient_links')
    .where('project_id', '=', projectId)
    .where('seen_at', '<', cutoff)
    .$if(last !== undefined, (query) => query.where('seen_at', '<=', Number(last!.seen_at)))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
