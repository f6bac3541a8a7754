import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pino from 'pino';
import { ConfigError } from '../src/config.ts';
import { resolveEncryptionKey } from '../src/encryptionKey.ts';

const silent = pino({ level: 'silent' });

describe('encryption key', () => {
  it('uses SVC_ENCRYPTION_KEY when it is set', () => {
    const configured = Buffer.alloc(32, 3).toString('base64');
    assert.deepEqual(resolveEncryptionKey(configured, undefined, silent), Buffer.alloc(32, 3));
  });

  it('with SQLite and no key, generates one beside the database (mode 0600) and keeps it', () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-key-'));
    try {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
      const first = resolveEncryptionKey(undefined, join(folder, 'svc.db'), logger);
      assert.equal(first.length, 32);
      const file = join(folder, 'svc-encryption.key');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(readFileSync(file, 'utf8').trim(), first.toString('base64'));
      assert.ok(lines.some((line) => line.includes('generated an encryption key')));
      assert.ok(!lines.some((line) => line.includes(first.toString('base64'))), 'the key is never logged');
      assert.deepEqual(resolveEncryptionKey(undefined, join(folder, 'svc.db'), silent), first);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('with PostgreSQL and no key, refuses to start with a clear message', () => {
    assert.throws(
      () => resolveEncryptionKey(undefined, undefined, silent),
      (error: Error) => error instanceof ConfigError && /SVC_ENCRYPTION_KEY is required with PostgreSQL/.test(error.message),
    );
  });
});
