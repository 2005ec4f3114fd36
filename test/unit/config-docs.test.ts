/**
 * docs/configuration.md lists exactly the variables src/config reads: a variable added to the
 * configuration without a row (or a row left behind by a removed variable) fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url);
const VARIABLE = /^(?:SERVICE|PAYMENT|LLM_PROVIDER|HF|OPENAI|ANTHROPIC)_[A-Z0-9_]+$/;

/** Every quoted variable name in src/config's sources. */
function variablesRead(): Set<string> {
  const dir = new URL('src/config/', ROOT);
  const names = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    for (const [, name] of readFileSync(new URL(file, dir), 'utf8').matchAll(/['"`]([A-Z][A-Z0-9_]+)['"`]/g)) {
      if (VARIABLE.test(name)) names.add(name);
    }
  }
  return names;
}

/**
 * The names a row's first cell documents: `A / B` names two, and `SERVICE_OIDC_ROLE_CLAIM /
 * _TENANT_CLAIM` shortens the second to the part after the first's prefix.
 */
export function namesOfCell(cell: string): string[] {
  const parts = cell.replace(/\(\+\)/g, '').split('/').map((p) => p.trim()).filter(Boolean);
  const first = parts[0];
  return parts.map((part) => {
    if (!part.startsWith('_')) return part;
    const suffixWords = part.slice(1).split('_').length;
    const stem = first.split('_').slice(0, -suffixWords).join('_');
    return `${stem}${part}`;
  });
}

function variablesDocumented(): { table: Set<string>; anywhere: Set<string> } {
  const page = readFileSync(new URL('docs/configuration.md', ROOT), 'utf8');
  const table = new Set<string>();
  for (const [, cell] of page.matchAll(/^\| ([A-Z][^|]*?) \|/gm)) {
    if (cell === 'Variable') continue;
    for (const name of namesOfCell(cell)) table.add(name);
  }
  const anywhere = new Set([...page.matchAll(/\b[A-Z][A-Z0-9_]{3,}\b/g)].map((m) => m[0]).filter((n) => VARIABLE.test(n)));
  return { table, anywhere };
}

describe('docs/configuration.md against src/config', () => {
  it('reads the shorthand of a row', () => {
    expect(namesOfCell('SERVICE_OIDC_ROLE_CLAIM / _TENANT_CLAIM / _PROJECT_CLAIM (+)')).toEqual([
      'SERVICE_OIDC_ROLE_CLAIM', 'SERVICE_OIDC_TENANT_CLAIM', 'SERVICE_OIDC_PROJECT_CLAIM',
    ]);
    expect(namesOfCell('SERVICE_HOST / SERVICE_PORT (+)')).toEqual(['SERVICE_HOST', 'SERVICE_PORT']);
  });

  it('every variable the configuration reads is documented, and every table row is read', () => {
    const read = variablesRead();
    const { table, anywhere } = variablesDocumented();
    expect(read.size).toBeGreaterThan(60);
    expect([...read].filter((n) => !anywhere.has(n) && !table.has(n)).sort(), 'read by src/config but not in docs/configuration.md').toEqual([]);
    expect([...table].filter((n) => !read.has(n)).sort(), 'in the table but read nowhere in src/config').toEqual([]);
  });
});
