import type { Db } from '../db/database.ts';
import { findOptOutSettings, saveOptOutSettings } from '../db/optOutSettings.ts';
import { DEFAULT_OPT_OUT_KEYWORDS, keywordProblems, normalizedKeywords } from '../domain/optOutKeywords.ts';
import { validationError } from '../errors.ts';

// A project's opt-out settings (GET/PUT /v1/projects/me/opt-out): which keywords opt a recipient
// out, and whether they do. Defaults until the project saves its own.

export interface OptOutSettings {
  keywords: string[];
  enabled: boolean;
}

export async function readOptOutSettings(db: Db, projectId: string): Promise<OptOutSettings> {
  const row = (await findOptOutSettings(db, [projectId])).get(projectId);
  return { keywords: row?.keywords ?? [...DEFAULT_OPT_OUT_KEYWORDS], enabled: row?.enabled ?? true };
}

/**
 * Replaces the keyword list and/or the switch (a field left out stays as it is); 400
 * validation_failed names each bad keyword. In the caller's transaction.
 */
export async function changeOptOutSettings(
  trx: Db,
  projectId: string,
  change: { keywords?: string[]; enabled?: boolean },
  now: number,
): Promise<OptOutSettings> {
  if (change.keywords !== undefined) {
    const problems = keywordProblems(change.keywords);
    if (problems.length > 0) throw validationError(problems);
  }
  const current = await readOptOutSettings(trx, projectId);
  const next = {
    keywords: change.keywords === undefined ? current.keywords : normalizedKeywords(change.keywords),
    enabled: change.enabled ?? current.enabled,
  };
  await saveOptOutSettings(trx, { projectId, ...next }, now);
  return next;
}
