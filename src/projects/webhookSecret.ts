import type { Db } from '../db/database.ts';
import { findProject, type ProjectRow, rotateWebhookSecret } from '../db/projects.ts';
import { generateWebhookSecret, sealSecret } from '../domain/secretBox.ts';
import { DomainError } from '../errors.ts';

/** How long a replaced secret keeps signing beside the new one (CONTRACT §3). */
export const PREVIOUS_SECRET_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** The caller's project, to read its webhook secrets; 401 if the project is gone. */
export async function projectWithSecrets(db: Db, projectId: string): Promise<ProjectRow> {
  const project = await findProject(db, projectId);
  if (!project) throw new DomainError('unauthorized');
  return project;
}

/** A new signing secret; the one it replaces keeps signing beside it for PREVIOUS_SECRET_LIFETIME_MS. */
export async function rotateProjectWebhookSecret(trx: Db, encryptionKey: Buffer, projectId: string, now: number): Promise<ProjectRow> {
  const sealed = sealSecret(encryptionKey, generateWebhookSecret());
  const project = await rotateWebhookSecret(trx, projectId, sealed, now + PREVIOUS_SECRET_LIFETIME_MS, now);
  if (!project) throw new DomainError('unauthorized');
  return project;
}
