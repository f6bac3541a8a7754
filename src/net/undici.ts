import { createRequire } from 'node:module';
import type * as Undici from 'undici';

// undici (109 modules and its WASM HTTP parser) is loaded by a process that calls out: one that
// runs workers loads it as they start (app.ts), an API process at its first outbound call.
const require = createRequire(import.meta.url);
let loaded: typeof Undici | undefined;

export function undici(): typeof Undici {
  return (loaded ??= require('undici') as typeof Undici);
}
