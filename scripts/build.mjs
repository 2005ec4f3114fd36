// Compiles TypeScript, bundles the command line and records the build's commit and time for
// /v1/version, all into a scratch folder beside dist/ (same depth, so paths relative to the
// package root hold), then moves the result into dist/ (scripts/install-build.mjs): a CLI or
// server running from dist/ meanwhile never finds it missing or half written.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleCli } from './bundle-cli.mjs';
import { buildConsole } from './build-console.mjs';
import { installBuild } from './install-build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outName = `.build-${process.pid}`;
const out = join(root, outName);
rmSync(out, { recursive: true, force: true });
try {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit', cwd: root });

  // The command line runs from one bundle (scripts/bundle-cli.mjs); dist/ keeps the library.
  await bundleCli(root, outName);

  // The web console's static files (dist/console), served at /console.
  const consoleBuild = await buildConsole(root, { out: join(out, 'console') });
  console.log(`console: ${consoleBuild.script} ${consoleBuild.script_gzip_bytes} bytes gzipped (budget ${consoleBuild.budget_gzip_bytes})`);

  let gitCommit = 'unknown';
  try {
    gitCommit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString().trim() || 'unknown';
  } catch { /* not a git checkout: keep 'unknown' */ }
  writeFileSync(join(out, 'build-info.json'), JSON.stringify({ git_commit: gitCommit, build_time: new Date().toISOString() }) + '\n');

  // The OpenAPI document of the built server (openapi.json, shipped in the package).
  execFileSync(process.execPath, [join(root, 'scripts', 'write-openapi.mjs'), out], { stdio: 'inherit', cwd: root });

  installBuild(out, join(root, 'dist'));
} finally {
  rmSync(out, { recursive: true, force: true });
}
