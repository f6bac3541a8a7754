import { findProject } from '../db/projects.ts';
import { findProviderAccount } from '../db/providerAccounts.ts';
import { componentsOf, type TemplateRow } from '../db/templates.ts';
import type { Database } from '../db/database.ts';
import { providerCredentialsOf } from '../projectSecrets.ts';
import type { ProviderCredentials, TemplateSubmission } from '../providers/provider.ts';

// What a template needs to reach the provider: the project's credentials and business account,
// and the template as the provider interface takes it (registration and deletion).

export interface ProviderContext {
  credentials: ProviderCredentials | undefined;
  businessAccountId: string | null;
  /** What keeps templates from reaching the provider: its account was checked, and its business account is not known. */
  problem: string | undefined;
}

export async function providerContextOf(deps: { database: Database; encryptionKey: Buffer }, projectId: string): Promise<ProviderContext> {
  const project = await findProject(deps.database.db, projectId);
  const credentials = project ? providerCredentialsOf(project, deps.encryptionKey) : undefined;
  const account = credentials ? await findProviderAccount(deps.database.db, projectId) : undefined;
  const businessAccountId = account?.business_account_id ?? null;
  const problem =
    account && account.checked_at !== null && businessAccountId === null && account.problem !== null
      ? (JSON.parse(account.problem) as { message: string }).message
      : undefined;
  return { credentials, businessAccountId, problem };
}

export function submissionOf(row: TemplateRow, provider: ProviderContext): TemplateSubmission & { providerTemplateId: string | null } {
  return {
    templateId: row.id,
    projectId: row.project_id,
    name: row.name,
    language: row.language,
    category: row.category,
    components: componentsOf(row),
    ...(row.parameter_format === 'NAMED' && { parameterFormat: 'NAMED' as const }),
    credentials: provider.credentials,
    businessAccountId: provider.businessAccountId,
    providerTemplateId: row.provider_template_id,
  };
}
