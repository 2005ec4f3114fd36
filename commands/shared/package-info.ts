import { readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The CLI's own version, from the package.json above this file. Searched upwards because the
 * file runs from source (commands/shared), compiled (dist/commands/shared) and bundled (dist/cli).
 */
let cached: string | null = null;

export function cliVersion(): string {
  if (cached !== null) return cached;
  const here = dirname(fileURLToPath(import.meta.url));
  // Compiled, this file sits in dist/commands/shared, or bundled in dist/cli: start at the
  // folder that holds dist/, so a normal run reads one file and throws no ENOENT on the way
  // (this runs on every command).
  const inDist = here.lastIndexOf(`${sep}dist${sep}`);
  let dir = inDist >= 0 ? here.slice(0, inDist) : here;
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: unknown };
      if (typeof pkg.version === 'string') return (cached = pkg.version);
    } catch {
      // no package.json here: keep climbing
    }
    dir = dirname(dir);
  }
  return (cached = 'unknown');
}
