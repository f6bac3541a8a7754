import type { Db } from './database.ts';

// A project's opt-out settings, kept on its row (CONTRACT §9): the keywords (null: the defaults)
// and whether they are honoured.

export interface OptOutSettingsRow {
  projectId: string;
  /** null: the defaults. */
  keywords: string[] | null;
  enabled: boolean;
}

function settingsOf(row: { id: string; opt_out_keywords?: string | null; opt_out_enabled?: number | boolean }): OptOutSettingsRow {
  return {
    projectId: row.id,
    keywords: row.opt_out_keywords === null || row.opt_out_keywords === undefined ? null : (JSON.parse(row.opt_out_keywords) as string[]),
    // pg gives an integer as a number; a driver that gives a boolean is read the same way.
    enabled: Number(row.opt_out_enabled ?? 1) === 1,
  };
}

/** The settings of these projects (absent: no such project). */
export async function findOptOutSettings(db: Db, projectIds: readonly string[]): Promise<Map<string, OptOutSettingsRow>> {
  if (projectIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('projects')
    .select(['id', 'opt_out_keywords', 'opt_out_enabled'])
    .where('id', 'in', [...new Set(projectIds)])
    .execute();
  return new Map(rows.map((row) => [row.id, settingsOf(row)]));
}

export async function saveOptOutSettings(db: Db, settings: OptOutSettingsRow, now: number): Promise<void> {
  await db
    .updateTable('projects')
    .set({
      opt_out_keywords: settings.keywords === null ? null : JSON.stringify(settings.keywords),
      opt_out_enabled: settings.enabled ? 1 : 0,
      updated_at: now,
    })
    .where('id', '=', settings.projectId)
    .execute();
}
