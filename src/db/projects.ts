import type { Db } from './database.ts';
import type { ProjectsTable } from './tables.ts';

/** A project as the API reads and writes it; `disabled_at` is the operator's (setProjectDisabled). */
export type ProjectRow = Omit<ProjectsTable, 'disabled_at'>;

export async function insertProject(db: Db, row: ProjectRow): Promise<void> {
  await db.insertInto('projects').values(row).execute();
}

export async function findProject(db: Db, id: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateProject(
  db: Db,
  id: string,
  changes: Partial<Omit<ProjectRow, 'id' | 'created_at'>>,
): Promise<ProjectRow | undefined> {
  await db.updateTable('projects').set(changes).where('id', '=', id).execute();
  return findProject(db, id);
}

/**
 * Makes `sealedSecret` the project's webhook secret and keeps the one it replaces as the previous
 * secret until `previousExpiresAt`. One statement, so concurrent rotations never lose a secret:
 * each demotes whichever secret is current when it runs.
 */
export async function rotateWebhookSecret(
  db: Db,
  id: string,
  sealedSecret: string,
  previousExpiresAt: number,
  now: number,
): Promise<ProjectRow | undefined> {
  await db
    .updateTable('projects')
    .set((eb) => ({
      previous_webhook_secret_enc: eb.ref('webhook_secret_enc'),
      previous_webhook_secret_expires_at: previousExpiresAt,
      webhook_secret_enc: sealedSecret,
      updated_at: now,
    }))
    .where('id', '=', id)
    .execute();
  return findProject(db, id);
}

export type SendingProject = Pick<
  ProjectRow,
  'id' | 'provider_phone_number_id' | 'provider_access_token_enc' | 'provider_messages_per_second' | 'marketing_messages'
>;

/** What the dispatcher needs of each project to send: its number, sealed token, throughput and marketing route. */
export async function findSendingProjects(db: Db, ids: readonly string[]): Promise<SendingProject[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('projects')
    .select(['id', 'provider_phone_number_id', 'provider_access_token_enc', 'provider_messages_per_second', 'marketing_messages'])
    .where('id', 'in', [...ids])
    .execute();
}

/**
 * Disables (every key answers 401) or enables a project; the key lookup reads the flag, so every
 * API process applies it from its next request. Returns false when there is no such project.
 */
export async function setProjectDisabled(db: Db, id: string, disabledAt: number | null): Promise<boolean> {
  const result = await db.updateTable('projects').set({ disabled_at: disabledAt }).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Which projects send from each of these phone numbers (a number may serve several projects). */
export async function projectsSendingFrom(db: Db, phoneNumberIds: readonly string[]): Promise<Map<string, Set<string>>> {
  const owners = new Map<string, Set<string>>();
  if (phoneNumberIds.length === 0) return owners;
  const rows = await db
    .selectFrom('projects')
    .select(['id', 'provider_phone_number_id'])
    .where('provider_phone_number_id', 'in', [...phoneNumberIds])
    .execute();
  for (const row of rows) {
    const projects = owners.get(row.provider_phone_number_id!) ?? new Set<string>();
    projects.add(row.id);
    owners.set(row.provider_phone_number_id!, projects);
  }
  return owners;
}
