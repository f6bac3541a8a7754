import type { Database, Db } from '../db/database.ts';
import { deleteTemplate, findTemplate, listTemplates, type TemplateRow } from '../db/templates.ts';
import type { MessageFields } from '../domain/templateMessage.ts';
import { DomainError, notFound, validationError } from '../errors.ts';
import type { Provider, TemplateDeletion } from '../providers/provider.ts';
import { templateParts } from '../sending/sendContexts.ts';
import type { ParameterRule } from '../domain/messageRequest.ts';
import { checkVariables, renderContent, variableProblems } from '../sending/sendRules.ts';
import { providerContextOf, submissionOf } from './providerContext.ts';

// A project's templates after registration (registerTemplate.ts): read, preview with variables,
// delete (here and at the provider).

/** A stored template's components and category history, parsed (for its view). */
export { categoryHistoryOf, componentsOf } from '../db/templates.ts';

/** A page of the project's templates, newest first (`limit + 1` rows). */
export function listProjectTemplates(db: Db, projectId: string, page: { limit: number; afterId?: string | undefined }): Promise<TemplateRow[]> {
  return listTemplates(db, projectId, page);
}

export async function getTemplate(db: Db, projectId: string, id: string): Promise<TemplateRow> {
  const row = await findTemplate(db, projectId, id);
  if (row === undefined) throw notFound('template');
  return row;
}

/** The template rendered with these variables, as a send of it would render it (the same rules). */
export async function previewTemplate(db: Db, projectId: string, id: string, item: MessageFields, parameterRule: ParameterRule = () => undefined) {
  const template = await getTemplate(db, projectId, id);
  const problems = variableProblems(item, '', parameterRule);
  if (problems.length > 0) throw validationError(problems);
  const parts = templateParts(template);
  checkVariables(template, parts, item);
  return renderContent(parts, item);
}

export interface TemplateRemoval {
  /** The template as it was. */
  row: TemplateRow;
  deletedAt: number;
  deletion: Exclude<TemplateDeletion, { kind: 'unavailable' }>;
}

/**
 * Deletes the template at the provider (by its id there), then here; nothing when the provider
 * cannot be reached (503). `write` runs the delete in a transaction that checks the caller's key.
 */
export async function removeTemplate(
  deps: { database: Database; encryptionKey: Buffer; provider: Provider },
  projectId: string,
  id: string,
  write: <T>(work: (trx: Db) => Promise<T>) => Promise<T>,
): Promise<TemplateRemoval> {
  const found = await getTemplate(deps.database.db, projectId, id);
  const deletion = await deps.provider.deleteTemplate(submissionOf(found, await providerContextOf(deps, projectId)));
  if (deletion.kind === 'unavailable') {
    throw new DomainError(
      'unavailable',
      `The provider could not be reached to delete the template; nothing was deleted, try again. (${deletion.error.code}: ${deletion.error.message})`,
      { headers: { 'retry-after': '30' } },
    );
  }
  const deletedAt = Date.now();
  const row = await write((trx) => deleteTemplate(trx, projectId, found.id));
  if (row === undefined) throw notFound('template');
  return { row, deletedAt, deletion };
}
