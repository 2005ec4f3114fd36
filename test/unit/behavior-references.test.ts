import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Comments cite the behaviour rules as `docs/behavior.md "Section"`. Every citation must name
 * a section that exists, and nothing may cite documents outside the repository.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FOLDERS = ['src', 'server', 'commands', 'bench', 'scripts', 'test'];

async function sourceFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const folder of FOLDERS) {
    const entries = await readdir(join(ROOT, folder), { withFileTypes: true, recursive: true });
    for (const e of entries) {
      const path = join(e.parentPath, e.name);
      if (e.isFile() && /\.(ts|mjs|js)$/.test(e.name) && !path.includes('/fixtures/')) files.push(path);
    }
  }
  return files;
}

describe('behaviour references', () => {
  it('every docs/behavior.md "Section" cited in code exists, and no outside document is cited', async () => {
    const doc = await readFile(join(ROOT, 'docs/behavior.md'), 'utf8');
    const sections = new Set([...doc.matchAll(/^##+ (.+)$/gm)].map((m) => m[1].trim()));
    const missing: string[] = [];
    const outside: string[] = [];
    let cited = 0;
    for (const file of await sourceFiles()) {
      if (file.endsWith('behavior-references.test.ts')) continue;
      const text = await readFile(file, 'utf8');
      for (const m of text.matchAll(/docs\/behavior\.md "([^"]+)"/g)) {
        cited += 1;
        if (!sections.has(m[1])) missing.push(`${file}: "${m[1]}"`);
      }
      if (/BEHAVIOR\.md|SPEC\.md|\bSPEC "|shared\/(spec|design)/.test(text)) outside.push(file);
    }
    expect(cited).toBeGreaterThan(20);
    expect(missing).toEqual([]);
    expect(outside).toEqual([]);
  });
});
