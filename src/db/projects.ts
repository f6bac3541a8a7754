import type { Db } from './database.ts';
import type { ProjectsTable } from './tables.ts';

export type ProjectRow = ProjectsTable;

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
