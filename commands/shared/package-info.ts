import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The CLI's own version, from the package.json above this file. Searched upwards because the
 * file runs both from source (commands/shared) and compiled (dist/commands/shared).
 */
let cached: string | null = null;

export function cliVersion(): string {
  if (cached !== null) return cached;
  const here = dirname(fileURLToPath(import.meta.url));
  // Compiled, this file sits in dist/commands/shared: start there at the root, so a normal
  // run reads one file and throws no ENOENT on the way (this runs on every command).
  let dir = here.endsWith(join('dist', 'commands', 'shared')) ? join(here, '..', '..', '..') : here;
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
