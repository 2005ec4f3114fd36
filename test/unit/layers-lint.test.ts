import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The layer rule (eslint/layers.js) as `npm run check` runs it. Each fixture under
 * test/fixtures/layers/ is linted as if it lived at the same path in the repository
 * (test/fixtures/layers/src/core/x.ts → src/core/x.ts); its first line says what to expect:
 * `// expect: ok` or `// expect: <part of the message>`.
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const FIXTURES = join(ROOT, 'test/fixtures/layers');

async function fixtures(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name)).sort();
}

const eslint = new ESLint({ cwd: ROOT });
const files = await fixtures(FIXTURES);

describe('layer rule', () => {
  it('has fixtures for every layer, and the normal lint run ignores them', async () => {
    const virtual = files.map((f) => relative(FIXTURES, f).split(sep).join('/'));
    for (const layer of ['src/contracts/', 'src/core/', 'src/ports/', 'src/services/', 'src/client/', 'src/mcp/', 'server/', 'commands/', 'src/app.ts']) {
      expect(virtual.some((v) => v.startsWith(layer))).toBe(true);
    }
    expect(await eslint.isPathIgnored(files[0])).toBe(true);
  });

  it('commands reach src/client only through its public entry, in every import form', async () => {
    const lint = async (text: string, file = 'commands/probe.ts') =>
      (await eslint.lintText(text, { filePath: join(ROOT, file) }))[0].messages.filter((m) => m.ruleId === 'project/layers').map((m) => m.message);
    expect(await lint("export { ServiceClient } from '../src/client/index.js';\n")).toEqual([]);
    for (const text of [
      "export { JobsClient } from '../src/client/jobs.js';\n",
      "export type { ApiError } from '../src/client/errors.js';\n",
      "export const later = () => import('../src/client/service-client.js');\n",
      "export type Pool = import('../src/client/undici-pool.js').LightPool;\n",
    ]) {
      expect(await lint(text), text).toEqual([expect.stringContaining('commands use the public client: import from src/client/index.js')]);
    }
    // The server (its in-process MCP transport) is held to the same entry.
    expect(await lint("export { apiErrorFor } from '../../src/client/api-errors.js';\n", 'server/mcp/probe.ts'))
      .toEqual([expect.stringContaining('import from src/client/index.js')]);
    // The rule is about commands and the server: the client's own files and the MCP layer keep their direct imports.
    expect(await lint("export { JobsClient } from './jobs.js';\n", 'src/client/probe.ts')).toEqual([]);
    expect(await lint("export { LlmClient } from '../client/llm.js';\n", 'src/mcp/probe.ts')).toEqual([]);
  });

  it.each(files.map((f) => [relative(FIXTURES, f).split(sep).join('/'), f]))('%s', async (virtualPath, file) => {
    const text = await readFile(file, 'utf8');
    const expected = /^\/\/ expect: (.+)$/m.exec(text)?.[1];
    expect(expected, 'fixture needs an "// expect:" first line').toBeDefined();
    const [result] = await eslint.lintText(text, { filePath: join(ROOT, virtualPath) });
    const layerMessages = result.messages.filter((m) => m.ruleId === 'project/layers').map((m) => m.message);
    if (expected === 'ok') {
      expect(layerMessages).toEqual([]);
    } else {
      expect(layerMessages).toHaveLength(1);
      expect(layerMessages[0]).toContain(expected);
    }
  });

  it('finds no violation in the repository: adapters are wired in src/app.ts only', async () => {
    // The project's own lint configuration over the real code, as npm run check runs it.
    const results = await eslint.lintFiles(['src', 'server', 'commands']);
    const linted = results.map((r) => relative(ROOT, r.filePath).split(sep).join('/'));
    for (const folder of ['src/app.ts', 'src/services/', 'src/client/', 'src/mcp/', 'server/routes/', 'server/auth/', 'commands/']) {
      expect(linted.some((f) => f.startsWith(folder)), folder).toBe(true);
    }
    const violations = results.flatMap((r) =>
      r.messages.filter((m) => m.ruleId === 'project/layers').map((m) => `${relative(ROOT, r.filePath)}:${m.line}: ${m.message}`));
    expect(violations).toEqual([]);
  }, 120_000);
});
