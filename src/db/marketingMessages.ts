import type { Db } from './database.ts';
import { type MarketingMessagesMode, marketingMessagesModeOf } from '../domain/marketingMessages.ts';

// A project's Marketing Messages API setting, kept on its row (null: off).

/** The project's mode; undefined when there is no such project. */
export async function findMarketingMessagesMode(db: Db, projectId: string): Promise<MarketingMessagesMode | undefined> {
  const row = await db.selectFrom('projects').select('marketing_messages').where('id', '=', projectId).executeTakeFirst();
  return row === undefined ? undefined : marketingMessagesModeOf(row.marketing_messages);
}

export async function saveMarketingMessagesMode(db: Db, projectId: string, mode: MarketingMessagesMode, now: number): Promise<void> {
  await db
    .updateTable('projects')
    .set({ marketing_messages: mode === 'off' ? null : mode, updated_at: now })
    .where('id', '=', projectId)
    .execute();
}

/** The current category of each of these templates of the project (a deleted template is absent). */
export async function currentTemplateCategories(db: Db, projectId: string, templateIds: readonly string[]): Promise<Map<string, string>> {
  if (templateIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('templates')
    .select(['id', 'category'])
    .where('project_id', '=', projectId)
    .where('id', 'in', [...new Set(templateIds)])
    .execute();
  return new Map(rows.map((row) => [row.id, row.category]));
}
