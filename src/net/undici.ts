import { createRequire } from 'node:module';
import type * as Undici from 'undici';

// undici (109 modules and its WASM HTTP parser: ≈ 20 MiB resident) is loaded on the first
// outbound call, not at start, so a process that never calls out never carries it.
const require = createRequire(import.meta.url);
let loaded: typeof Undici | undefined;

export function undici(): typeof Undici {
  return (loaded ??= require('undici') as typeof Undici);
}
