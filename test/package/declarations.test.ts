import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/env.js';

/**
 * The client's shipped declarations (dist/src/client/*.d.ts, `npm run build` first) type-check
 * in a consumer WITHOUT @types/node: `types: []`, every declaration file checked
 * (skipLibCheck off). A browser or Deno project, or one that never installed Node's types,
 * must not fail on a `Buffer` or `NodeJS.*` in our public types. (The DOM lib stands in for
 * the platform globals such a project has; zod's own declarations name `URL`.)
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const run = promisify(execFile);

let dir: { path: string; remove(): Promise<void> };
beforeAll(async () => {
  dir = await tempDir('dts-consumer-');
});
afterAll(() => dir?.remove());

describe('the client declarations', () => {
  it('type-check in a consumer that has no @types/node', async () => {
    await writeFile(join(dir.path, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await writeFile(join(dir.path, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true,
        skipLibCheck: false, types: [], lib: ['ES2022', 'DOM'],
        paths: { 'agent-memory-service': [join(ROOT, 'dist/src/client/index.d.ts')] },
      },
      files: ['use.ts'],
    }));
    await writeFile(join(dir.path, 'use.ts'), [
      "import { ApiError, ServiceClient, TransportError } from 'agent-memory-service';",
      "const client = new ServiceClient({ url: 'http://127.0.0.1:8000', apiKey: null });",
      "const { matches } = await client.recall({ task: 'parse a CSV file' });",
      'const first: string | undefined = matches[0]?.pattern.code;',
      "const { body } = await client.governance.exportNdjsonRaw();",
      'for await (const chunk of body) { const bytes: number = chunk.byteLength; void bytes; }',
      "try { await client.keys.list({ allProjects: true }); } catch (err) { if (err instanceof ApiError || err instanceof TransportError) void err.message; }",
      'await client.close();',
      'export { first };',
    ].join('\n'));
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const res = await run(process.execPath, [tsc, '-p', dir.path], { cwd: dir.path }).catch((err: { stdout: string; code: number }) => err);
    expect(res.stdout).toBe('');
  });
});
