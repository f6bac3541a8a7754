import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DOCUMENT_PATH, generateSdkFiles, SCHEMA_PATH } from './generated.ts';

// npm run sdk:generate — rewrites sdk/openapi.json and sdk/src/schema.ts from the served document.
const files = await generateSdkFiles();
writeFileSync(DOCUMENT_PATH, files.document);
writeFileSync(SCHEMA_PATH, files.schema);
console.log(`wrote ${fileURLToPath(DOCUMENT_PATH)} and ${fileURLToPath(SCHEMA_PATH)}`);
