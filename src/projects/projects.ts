import { newApiKey } from '../apiKeys/apiKeys.ts';
import { insertApiKey } from '../db/apiKeys.ts';
import type { Database, Db } from '../db/database.ts';
import { findProject, insertProject, type ProjectRow } from '../db/projects.ts';
import { findProviderAccount, type ProviderAccountRow } from '../db/providerAccounts.ts';
import { newId } from '../domain/ids.ts';
import { generateWebhookSecret, sealSecret } from '../domain/secretBox.ts';
import { DomainError } from '../errors.ts';

// Projects: signing up creates one with its first API key ("default") and a webhook secret;
// reading it returns it with its provider account, if credentials were saved.

export interface CreatedProject {
  project: ProjectRow;
  /** The first key's value, shown once. */
  apiKey: string;
  apiKeyId: string;
}

export async function createProject(
  database: Database,
  encryptionKey: Buffer,
  fields: { name: string; ownerEmail: string },
  now: number,
): Promise<CreatedProject> {
  const project: ProjectRow = {
    id: newId('proj', now),
    name: fields.name,
    owner_email: fields.ownerEmail,
    provider_phone_number_id: null,
    provider_access_token_enc: null,
    callback_url: null,
    webhook_secret_enc: sealSecret(encryptionKey, generateWebhookSecret()),
    previous_webhook_secret_enc: null,
    previous_webhook_secret_expires_at: null,
    provider_messages_per_second: null,
    credentials_updated_at: null,
    created_at: now,
    updated_at: now,
  };
  const key = newApiKey(project.id, 'default', now);
  await database.db.transaction().execute(async (trx) => {
    await insertProject(trx, project);
    await insertApiKey(trx, key.row);
  });
  return { project, apiKey: key.value, apiKeyId: key.row.id };
}

/** The caller's project with its provider account (if any); 401 if the project is gone. */
export async function readProject(db: Db, projectId: string): Promise<{ project: ProjectRow; account: ProviderAccountRow | undefined }> {
  const project = await findProject(db, projectId);
  if (!project) throw new DomainError('unauthorized');
  const account = project.provider_access_token_enc === null ? undefined : await findProviderAccount(db, project.id);
  return { project, account };
}
