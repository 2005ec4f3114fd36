#!/usr/bin/env node
// Thin entry: everything lives in commands/ (compiled and bundled into dist/cli/ by `npm run
// build`, which `npm ci` runs through the prepare script); commands/entry.ts is the bundle's entry.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist') + '/';

let run;
try {
  ({ run } = await import('../dist/cli/entry.js'));
} catch (err) {
  // No build, or a part of it gone (a `rm -rf dist`): one line that says what to do, not a
  // stack trace. Any other failure to load is a bug and keeps its trace.
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes(dist)) throw err;
  const name = /agent-memory(\.js)?$/.test(process.argv[1] ?? '') ? 'agent-memory' : 'service';
  process.stderr.write(`${name}: the build in ${dist} is missing or incomplete: run \`npm run build\` in ${root}\n`);
  process.exit(1);
}

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
