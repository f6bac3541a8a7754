import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../app.ts';
import { loadConfig } from '../../config.ts';

/**
 * The OpenAPI document exactly as GET /openapi.json serves it, built in-process (an API server on
 * a throwaway SQLite file, never listening) for the SDK generator, its drift test and the lint.
 */
export async function servedOpenApiDocument(): Promise<Record<string, unknown>> {
  const folder = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
  try {
    const config = loadConfig({
      SVC_LOG_LEVEL: 'silent',
      SVC_DATABASE_URL: `sqlite:${join(folder, 'svc.db')}`,
      SVC_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
    });
    const app = await createApp(config, { role: 'api' });
    try {
      await app.http!.ready();
      return structuredClone(app.http!.swagger()) as unknown as Record<string, unknown>;
    } finally {
      await app.stop();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
