// Builds the web console (console/) into dist/console: one hashed script, one hashed style
// sheet (minified) and the hashed tab icon, plus index.html naming them. Everything is served
// by the service itself (no CDN, no network at run time). Fails when the script is over its gzip budget.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** The ceiling for JavaScript shipped to the browser, gzipped. */
export const SCRIPT_BUDGET_GZIP_BYTES = 250 * 1024;

const hashOf = (bytes) => createHash('sha256').update(bytes).digest('hex').slice(0, 12);

/** Builds console/ of `root` into `out` (dist/console); `budget` is the gzip ceiling in bytes. */
export async function buildConsole(root, { out = join(root, 'dist', 'console'), budget = SCRIPT_BUDGET_GZIP_BYTES } = {}) {
  const source = join(root, 'console');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'assets'), { recursive: true });

  const result = await build({
    entryPoints: [join(source, 'src', 'main.tsx')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    write: false,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: join(source, 'tsconfig.json'),
    legalComments: 'none',
    logLevel: 'warning',
  });
  const script = result.outputFiles[0].contents;
  const gzipped = gzipSync(script, { level: 9 }).length;
  if (gzipped > budget) {
    throw new Error(`console script is ${gzipped} bytes gzipped, over the ${budget}-byte budget`);
  }
  const styles = readFileSync(join(source, 'styles.css'));
  // The tab icon, served like the other assets (without one the browser asks for /favicon.ico: a 404).
  const icon = readFileSync(join(source, 'favicon.svg'));
  const scriptName = `app-${hashOf(script)}.js`;
  const stylesName = `app-${hashOf(styles)}.css`;
  const iconName = `favicon-${hashOf(icon)}.svg`;
  writeFileSync(join(out, 'assets', scriptName), script);
  writeFileSync(join(out, 'assets', stylesName), styles);
  writeFileSync(join(out, 'assets', iconName), icon);
  const html = readFileSync(join(source, 'index.html'), 'utf8')
    .replace('%SCRIPT%', scriptName).replace('%STYLES%', stylesName).replace('%FAVICON%', iconName);
  writeFileSync(join(out, 'index.html'), html);
  const report = { script: scriptName, icon: iconName, script_bytes: script.length, script_gzip_bytes: gzipped, budget_gzip_bytes: budget };
  writeFileSync(join(out, 'build.json'), JSON.stringify(report) + '\n');
  return report;
}
