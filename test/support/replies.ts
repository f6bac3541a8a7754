import type { TestServer } from './server.ts';

// Templates with quick-reply buttons, for the reply tests. Registering buttons through the API is
// the other half of issue 21; until then these tests store the BUTTONS component the way
// registration keeps components (as submitted, in Meta's shape) directly on an approved template.

export async function addQuickReplies(server: TestServer, templateId: string, texts: string[], extra: unknown[] = []): Promise<void> {
  const row = await server.app.database.db.selectFrom('templates').select('components').where('id', '=', templateId).executeTakeFirstOrThrow();
  const components = [
    ...(JSON.parse(row.components) as unknown[]),
    { type: 'BUTTONS', buttons: [...texts.map((text) => ({ type: 'QUICK_REPLY', text })), ...extra] },
  ];
  await server.app.database.db
    .updateTable('templates')
    .set({ components: JSON.stringify(components) })
    .where('id', '=', templateId)
    .execute();
}

/** The project's suppression rows, by number. */
export async function suppressionRows(server: TestServer, projectId: string) {
  const rows = await server.app.database.db.selectFrom('suppressions').selectAll().where('project_id', '=', projectId).execute();
  return new Map(rows.map((row) => [row.phone_number, row]));
}
