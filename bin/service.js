#!/usr/bin/env node
// Thin entry: everything lives in commands/main.ts (compiled to dist/ by `npm run build`,
// which `npm ci` runs through the prepare script).
import { main } from '../dist/commands/main.js';

const code = await main(process.argv);
process.exitCode = code;
