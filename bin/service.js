#!/usr/bin/env node
// Thin entry: everything lives in commands/main.ts (compiled to dist/ by `npm run build`,
// which `npm ci` runs through the prepare script).
import { setTimeout } from 'node:timers';
import { main } from '../dist/commands/main.js';

// A reader that stops early (`service export | head`) closes the pipe: not our failure.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const code = await main(process.argv);
process.exitCode = code;
// The command is done and its output written (pipes and files are synchronous on POSIX). If a
// stray handle (a library's timer or socket) would keep the process alive, end it anyway;
// unref() means this timer never delays a normal exit.
setTimeout(() => process.exit(code), 1000).unref();
