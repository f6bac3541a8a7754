import type { ProjectRow } from './db/projects.ts';
import { openSecret } from './domain/secretBox.ts';
import type { ProviderCredentials } from './providers/provider.ts';

// The project's sealed secrets, opened only where they are used: never in a response or a log.

/**
 * Opens sealed secrets and remembers each by its sealed value, for the workers that open one on
 * every send or delivery (a decryption each time, otherwise). A sealed value is the sealing of one
 * plaintext only (a fresh IV each time), so a rotated secret is a new key here and is never served
 * stale. Bounded: forgotten all at once past 10,000.
 */
export class SecretOpener {
  readonly #key: Buffer;
  readonly #opened = new Map<string, string>();

  constructor(key: Buffer) {
    this.#key = key;
  }

  open(sealed: string): string {
    let plaintext = this.#opened.get(sealed);
    if (plaintext === undefined) {
      plaintext = openSecret(this.#key, sealed);
      if (this.#opened.size >= 10_000) this.#opened.clear();
      this.#opened.set(sealed, plaintext);
    }
    return plaintext;
  }
}

const opener = (key: Buffer | SecretOpener) =>
  key instanceof SecretOpener ? (sealed: string) => key.open(sealed) : (sealed: string) => openSecret(key, sealed);

/** The webhook signing secrets that sign now: the current one, then the previous one for 24 h after a rotation. */
export function liveWebhookSecrets(
  project: Pick<ProjectRow, 'webhook_secret_enc' | 'previous_webhook_secret_enc' | 'previous_webhook_secret_expires_at'>,
  key: Buffer | SecretOpener,
  now: number,
): string[] {
  const open = opener(key);
  const secrets = [open(project.webhook_secret_enc)];
  const previousExpiresAt = project.previous_webhook_secret_expires_at;
  if (project.previous_webhook_secret_enc !== null && previousExpiresAt !== null && previousExpiresAt > now) {
    secrets.push(open(project.previous_webhook_secret_enc));
  }
  return secrets;
}

/** The provider credentials, or undefined until the project has saved them. */
export function providerCredentialsOf(
  project: Pick<ProjectRow, 'provider_phone_number_id' | 'provider_access_token_enc'>,
  key: Buffer | SecretOpener,
): ProviderCredentials | undefined {
  if (project.provider_phone_number_id === null || project.provider_access_token_enc === null) return undefined;
  return { sender: project.provider_phone_number_id, secret: opener(key)(project.provider_access_token_enc) };
}
