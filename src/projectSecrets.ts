import type { ProjectRow } from './db/projects.ts';
import { openSecret } from './domain/secretBox.ts';
import type { ProviderCredentials } from './providers/provider.ts';

// The project's sealed secrets, opened only where they are used: never in a response or a log.

/** The webhook signing secrets that sign now: the current one, then the previous one for 24 h after a rotation. */
export function liveWebhookSecrets(
  project: Pick<ProjectRow, 'webhook_secret_enc' | 'previous_webhook_secret_enc' | 'previous_webhook_secret_expires_at'>,
  key: Buffer,
  now: number,
): string[] {
  const secrets = [openSecret(key, project.webhook_secret_enc)];
  const previousExpiresAt = project.previous_webhook_secret_expires_at;
  if (project.previous_webhook_secret_enc !== null && previousExpiresAt !== null && previousExpiresAt > now) {
    secrets.push(openSecret(key, project.previous_webhook_secret_enc));
  }
  return secrets;
}

/** The provider credentials, or undefined until the project has saved them. */
export function providerCredentialsOf(
  project: Pick<ProjectRow, 'provider_phone_number_id' | 'provider_access_token_enc'>,
  key: Buffer,
): ProviderCredentials | undefined {
  if (project.provider_phone_number_id === null || project.provider_access_token_enc === null) return undefined;
  return { sender: project.provider_phone_number_id, secret: openSecret(key, project.provider_access_token_enc) };
}
