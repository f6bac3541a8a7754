import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Secrets at rest: AES-256-GCM, stored as "v1." + base64(iv | tag | ciphertext). The version
// prefix lets a later key rotation tell old from new.
const VERSION = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function sealSecret(key: Buffer, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return VERSION + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

export function openSecret(key: Buffer, sealed: string): string {
  if (!sealed.startsWith(VERSION)) throw new Error('unknown secret format');
  const raw = Buffer.from(sealed.slice(VERSION.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
    'utf8',
  );
}

/** A project's webhook signing secret, in the Standard Webhooks form: whsec_ + base64(32 bytes). */
export function generateWebhookSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64');
}
