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
  let dir = dirname(fileURLToPath(import.meta.url));
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
