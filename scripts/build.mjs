// Compiles TypeScript to dist/ and records the build's commit and time for /v1/version.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleCli } from './bundle-cli.mjs';
import { buildConsole } from './build-console.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });

// The command line runs from one bundle (scripts/bundle-cli.mjs); dist/ keeps the library.
await bundleCli(root);

// The web console's static files (dist/console), served at /console.
const consoleBuild = await buildConsole(root);
console.log(`console: ${consoleBuild.script} ${consoleBuild.script_gzip_bytes} bytes gzipped (budget ${consoleBuild.budget_gzip_bytes})`);

let gitCommit = 'unknown';
try {
  gitCommit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
    .toString().trim() || 'unknown';
} catch { /* not a git checkout: keep 'unknown' */ }
mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(join(root, 'dist', 'build-info.json'), JSON.stringify({ git_commit: gitCommit, build_time: new Date().toISOString() }) + '\n');

// The OpenAPI document of the built server (openapi.json, shipped in the package).
execFileSync(process.execPath, [join(root, 'scripts', 'write-openapi.mjs')], { stdio: 'inherit', cwd: root });
