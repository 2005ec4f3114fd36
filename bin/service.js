#!/usr/bin/env node
// Thin entry: everything lives in commands/ (compiled and bundled into dist/cli/ by `npm run
// build`, which `npm ci` runs through the prepare script); commands/entry.ts is the bundle's entry.
import { run } from '../dist/cli/entry.js';

// A reader that stops early (`service export | head`) closes the pipe: not our failure.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const code = await run(process.argv);
process.exitCode = code;
// The command is done. Once what it wrote has reached stdout and stderr, end the process: a
// library's idle timer (undici keeps one ticking for up to a second after its pool closed)
// must not add its delay to every call of a command that shell loops run.
const flushed = (stream) => new Promise((resolve) => stream.write('', resolve));
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(code);
