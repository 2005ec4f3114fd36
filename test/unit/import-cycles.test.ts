import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mutualFolders, mutualImports, valueImports } from '../support/import-cycles.js';

/**
 * No two modules need each other to load: a value cycle makes the load order decide which one
 * sees the other half-initialised. Shared facts go down a layer instead (the pattern-key format
 * and the export record mapping live in core, used by both services that need them).
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const ADAPTER_FOLDERS = [
  ...readdirSync(join(ROOT, 'src/adapters'), { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'storage').map((d) => `src/adapters/${d.name}`),
  ...readdirSync(join(ROOT, 'src/adapters/storage'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => `src/adapters/storage/${d.name}`),
];

describe('no import cycles', () => {
  const graph = valueImports(ROOT, ['src']);

  it('no two source files import each other', () => {
    expect(graph.get('src/services/patterns.ts')).toBeDefined();
    expect(mutualImports(graph)).toEqual([]);
  });

  it('no two adapter folders import each other (migrations and PostgreSQL storage among them)', () => {
    expect(ADAPTER_FOLDERS).toEqual(expect.arrayContaining(['src/adapters/migrations', 'src/adapters/storage/postgres']));
    expect(mutualFolders(graph, ADAPTER_FOLDERS)).toEqual([]);
  });

  it('reports a pair of files, and a pair of folders, that import each other', () => {
    const g = new Map([['a.ts', ['b.ts']], ['b.ts', ['a.ts']], ['c.ts', ['d.ts']], ['d.ts', []]]);
    expect(mutualImports(g)).toEqual(['a.ts <-> b.ts']);
    expect(mutualFolders(new Map([['x/1.ts', ['y/2.ts']], ['y/2.ts', []], ['y/3.ts', ['x/4.ts']], ['x/4.ts', []]]), ['x', 'y'])).toEqual(['x <-> y']);
  });
});
