import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ValidationError } from '../../core/errors.js';

/** One numbered revision: `NNNN_name.up.sql` plus its `NNNN_name.down.sql`. */
export interface Migration {
  version: number;
  name: string;
  upPath: string;
  downPath: string;
}

const FILE_RE = /^(\d{4})_([a-z0-9_]+)\.(up|down)\.sql$/;

/** `0001_init`: how revisions are shown and accepted on the command line. */
export function revisionLabel(m: Pick<Migration, 'version' | 'name'>): string {
  return `${String(m.version).padStart(4, '0')}_${m.name}`;
}

/**
 * The package's migrations/ folder. Found by walking up from this module, because the same
 * code runs from src/ (tests) and from dist/src/ (the built binary), at different depths.
 */
export function defaultMigrationsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'migrations'))) return join(dir, 'migrations');
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the migrations/ folder of the service package');
    dir = parent;
  }
}

/** Every migration in `dir`, ordered by version; throws on gaps in the up/down pairs. */
export async function loadMigrations(dir: string = defaultMigrationsDir()): Promise<Migration[]> {
  const byVersion = new Map<number, { name: string; up?: string; down?: string }>();
  for (const file of await readdir(dir)) {
    const m = FILE_RE.exec(file);
    if (!m) continue;
    const version = Number(m[1]);
    const entry = byVersion.get(version) ?? { name: m[2] };
    if (entry.name !== m[2]) throw new Error(`migrations: version ${m[1]} has two names (${entry.name}, ${m[2]})`);
    entry[m[3] as 'up' | 'down'] = join(dir, file);
    byVersion.set(version, entry);
  }
  const out: Migration[] = [];
  for (const [version, e] of [...byVersion].sort((a, b) => a[0] - b[0])) {
    if (!e.up || !e.down) {
      throw new Error(`migrations: ${revisionLabel({ version, name: e.name })} needs both an .up.sql and a .down.sql file`);
    }
    out.push({ version, name: e.name, upPath: e.up, downPath: e.down });
  }
  return out;
}

export function readMigrationSql(path: string): Promise<string> {
  return readFile(path, 'utf8');
}

/**
 * Parses a revision given by a user (`1`, `0001`, `0001_init`) into its version number;
 * `0` means "before the first migration". Throws ValidationError (bad input) when it names no
 * known migration.
 */
export function parseRevision(rev: string, migrations: Migration[]): number {
  const m = /^(\d+)(?:_([a-z0-9_]+))?$/.exec(rev.trim());
  if (!m) throw new ValidationError(`invalid revision "${rev}": expected a number such as 0001 or a name such as 0001_init`);
  const version = Number(m[1]);
  if (version === 0 && m[2] === undefined) return 0;
  const found = migrations.find((x) => x.version === version);
  if (!found || (m[2] !== undefined && m[2] !== found.name)) {
    const known = migrations.map(revisionLabel).join(', ') || 'none';
    throw new ValidationError(`unknown revision "${rev}" (known: ${known})`);
  }
  return version;
}
