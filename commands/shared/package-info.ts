import { readFileSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
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

/**
 * The names the CLI is installed under (package.json "bin"). `service` is the specification's;
 * `agent-memory` is the same program under a name that no system tool has (Debian and Ubuntu
 * ship /usr/sbin/service, which a `service` on the PATH shadows or is shadowed by).
 */
export const PROGRAM_NAMES = ['service', 'agent-memory'] as const;
export type ProgramName = (typeof PROGRAM_NAMES)[number];

/** The name this process was started as (argv[1] is bin/agent-memory.js or a link named so). */
export function programName(argv: readonly string[]): ProgramName {
  const invoked = basename(argv[1] ?? '').replace(/\.m?js$/, '');
  return invoked === 'agent-memory' ? 'agent-memory' : 'service';
}

/**
 * `text` with each command it names in backticks (`service migrate up`) named as the program
 * was called. The server's messages and the CLI's hints say `service …`, the specification's
 * name; run as `agent-memory`, that line would start Debian's /usr/sbin/service instead.
 */
export function asInvoked(text: string, program: string | undefined): string {
  return program === undefined || program === 'service' ? text : text.replace(/`service(?=[ `])/g, `\`${program}`);
}

