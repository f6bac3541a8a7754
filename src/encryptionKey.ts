import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { ConfigError } from './config.ts';

const KEY_FILE = 'svc-encryption.key';

/**
 * The key that seals provider tokens and webhook secrets at rest. From SVC_ENCRYPTION_KEY; with
 * SQLite and no key, one is generated beside the database (mode 0600) so a laptop needs no setup;
 * with PostgreSQL a key must be given, since processes on many machines must share it.
 */
export function resolveEncryptionKey(
  configured: string | undefined,
  sqlitePath: string | undefined,
  logger: Logger,
): Buffer {
  if (configured !== undefined) return Buffer.from(configured, 'base64');
  // PostgreSQL without a key never gets here: loadConfig refuses it.
  if (sqlitePath === undefined) throw new ConfigError('SVC_ENCRYPTION_KEY is required with PostgreSQL');
  const folder = sqlitePath === ':memory:' ? process.cwd() : dirname(sqlitePath);
  const file = join(folder, KEY_FILE);
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new ConfigError(`${file} does not hold a 32-byte base64 key`);
    return key;
  }
  const key = randomBytes(32);
  mkdirSync(folder, { recursive: true });
  writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  logger.warn({ file }, 'SVC_ENCRYPTION_KEY is not set: generated an encryption key beside the database');
  return key;
}
