#!/usr/bin/env node
// The `svc` command. Node 24 runs the TypeScript sources directly (type stripping).
import '../src/main.ts';
