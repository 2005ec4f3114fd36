import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/behavior.md "Storages": a storage feature names both implementations or says why one
 * is enough. The port's optional members are the features a storage may lack, so each must be
 * named (in backticks) in that section's table.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('storage features', () => {
  it('every optional member of the storage port is in the table of docs/behavior.md "Storages"', async () => {
    const port = await readFile(join(ROOT, 'src/ports/storage.ts'), 'utf8');
    // Optional methods (`vectors?(…)`, `withScopeLock?<T>(…)`) and repositories (`readonly billing?:`), not data fields.
    const optional = [...port.matchAll(/^\s+(?:readonly\s+(\w+)\?:|(\w+)\?(?:<[^>]*>)?\()/gm)].map((m) => m[1] ?? m[2]);
    expect(optional).toEqual(expect.arrayContaining(['vectors', 'writeBatch', 'copyIn', 'billing', 'withScopeLock', 'schemaRevision']));
    const doc = await readFile(join(ROOT, 'docs/behavior.md'), 'utf8');
    const section = /^## Storages\n([\s\S]*?)(?=^## )/m.exec(doc)?.[1] ?? '';
    const table = section.split('\n').filter((line) => line.startsWith('|')).join('\n');
    expect(table).toContain('| Feature | JSON | PostgreSQL | Why |');
    expect(optional.filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});
