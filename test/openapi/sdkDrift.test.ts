import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DOCUMENT_PATH, generateSdkFiles, SCHEMA_PATH } from '../../sdk/scripts/generated.ts';

// The SDK's committed types must be those of the document svc serves now: a route schema changed
// without regenerating fails here.

test('the SDK’s generated files match the served OpenAPI document', async () => {
  const fresh = await generateSdkFiles();
  const hint = 'the SDK is out of date with the routes: run `npm run sdk:generate` and commit sdk/openapi.json and sdk/src/schema.ts';
  assert.ok(readFileSync(DOCUMENT_PATH, 'utf8') === fresh.document, `sdk/openapi.json differs from /openapi.json: ${hint}`);
  assert.ok(readFileSync(SCHEMA_PATH, 'utf8') === fresh.schema, `sdk/src/schema.ts differs from the generated types: ${hint}`);
});
