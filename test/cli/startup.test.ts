import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { childEnv, tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * A CLI that starts fast loads only what its command needs. A module hook records every ESM
 * module the process resolves: `--version` and `recall` must not touch the server, zod, the
 * model runtime, pg or the LLM SDKs, and neither does the package's client entry. (Speed itself is measured by `npm run bench -- --cli`.)
 */
let server: ServerHandle;
let dir: { path: string; remove(): Promise<void> };
let hook: string;

beforeAll(async () => {
  dir = await tempDir('svc-cli-startup-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
  const hooks = join(dir.path, 'hooks.mjs');
  await writeFile(hooks, "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('LOADED ' + r.url + '\\n'); return r; }\n");
  hook = join(dir.path, 'register.mjs');
  await writeFile(hook, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
});
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

function loadedBy(args: string[]): string[] {
  const res = spawnSync(process.execPath, ['--import', hook, ...args], { env: childEnv(), encoding: 'utf8' });
  expect(res.status, res.stderr).toBe(0);
  return res.stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice(7));
}

const cli = (args: string[]) => loadedBy([BIN, ...args]);
/** The built public entry of the package (what `import … from 'agent-memory-service'` loads). */
const CLIENT_ENTRY = pathToFileURL(join(dirname(BIN), '..', 'dist', 'src', 'client', 'index.js')).href;

const HEAVY = /node_modules\/(zod|fastify|pg|pgvector|openai|@anthropic-ai|@huggingface|onnxruntime|prom-client|pino|ora|@inquirer)\/|\/server\/|\/src\/(adapters|services|contracts)\//;

describe('what a command loads', () => {
  it('--version loads no command at all', () => {
    const loaded = cli(['--version']);
    expect(loaded.filter((u) => HEAVY.test(u))).toEqual([]);
    expect(loaded.filter((u) => /\/commands\/[a-z-]+\.js$/.test(u)).map((u) => u.split('/').pop()).sort()).toEqual(['examples.js', 'main.js', 'registry.js']);
  });

  it('recall against a running server loads neither zod nor the server, pg or the model', () => {
    const loaded = cli(['recall', 'parse a CSV file', '--readonly', '--url', server.url]);
    expect(loaded.filter((u) => HEAVY.test(u))).toEqual([]);
    expect(loaded.some((u) => u.endsWith('/commands/recall.js'))).toBe(true);
    expect(loaded.some((u) => u.endsWith('/commands/learn.js'))).toBe(false);
  });

  it('the client\'s public entry loads no zod, with every area reached and a request made', () => {
    const script = `
      const { ServiceClient } = await import(${JSON.stringify(CLIENT_ENTRY)});
      const client = new ServiceClient({ url: ${JSON.stringify(server.url)}, responseCheck: 'shape' });
      for (const area of [client.jobs, client.keys, client.llm, client.analytics, client.governance, client.governance.retention, client.billing]) {
        if (typeof area !== 'object') throw new Error('missing area');
      }
      await client.recall({ task: 'parse a CSV file', readonly: true });
      await client.close();`;
    const loaded = loadedBy(['--input-type=module', '-e', script]);
    expect(loaded.some((u) => u.endsWith('/dist/src/client/index.js'))).toBe(true);
    expect(loaded.filter((u) => HEAVY.test(u))).toEqual([]);
  });
});
