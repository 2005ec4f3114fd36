import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { childEnv, tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * A CLI that starts fast loads only what its command needs. bin/service.js runs the bundle in
 * dist/cli (scripts/bundle-cli.mjs), whose meta.json says which sources each chunk holds. A
 * module hook records every ESM module the process resolves and, at exit, every built-in
 * module it loaded: `--version` and `recall` must not touch the server, zod, the model
 * runtime, pg or the LLM SDKs, and recall must not load HTTP/2 or TLS (undici's h2 half) nor
 * child_process (commander's executable subcommands).
 * The package's client entry, imported by a library user, loads no zod either.
 * (Speed itself is measured by `npm run bench -- --cli`.)
 */
let server: ServerHandle;
let dir: { path: string; remove(): Promise<void> };
let hook: string;

const CLI_DIR = join(BIN, '..', '..', 'dist', 'cli');
const chunks = JSON.parse(readFileSync(join(CLI_DIR, 'meta.json'), 'utf8')) as Record<string, { sources: string[]; imports: string[] }>;

beforeAll(async () => {
  dir = await tempDir('svc-cli-startup-');
  server = await startServer({ dataPath: join(dir.path, 'data') });
  const hooks = join(dir.path, 'hooks.mjs');
  await writeFile(hooks, "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('LOADED ' + r.url + '\\n'); return r; }\n");
  hook = join(dir.path, 'register.mjs');
  await writeFile(hook, [
    "import { register } from 'node:module';",
    `register(${JSON.stringify(pathToFileURL(hooks).href)});`,
    "process.on('exit', () => process.stderr.write('BUILTINS ' + process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(',') + '\\n'));",
    '',
  ].join('\n'));
});
afterAll(async () => {
  await server?.stop();
  await dir?.remove();
});

interface Loaded {
  /** Project sources and package files behind every module the process loaded. */
  sources: string[];
  builtins: string[];
}

function loadedBy(args: string[]): Loaded {
  const res = spawnSync(process.execPath, ['--import', hook, ...args], { env: childEnv(), encoding: 'utf8' });
  expect(res.status, res.stderr).toBe(0);
  const lines = res.stderr.split('\n');
  const urls = lines.filter((l) => l.startsWith('LOADED ')).map((l) => l.slice(7));
  const sources: string[] = [];
  for (const url of urls) {
    const chunk = /\/dist\/cli\/([^/]+\.js)$/.exec(url)?.[1];
    if (chunk === undefined) sources.push(url);
    else sources.push(...(chunks[chunk]?.sources ?? [`unknown chunk ${chunk}`]));
  }
  const builtins = lines.find((l) => l.startsWith('BUILTINS '))?.slice(9).split(',') ?? [];
  return { sources, builtins };
}

const cli = (args: string[]) => loadedBy([BIN, ...args]);
/** The built public entry of the package (what `import … from 'agent-memory-service'` loads). */
const CLIENT_ENTRY = pathToFileURL(join(dirname(BIN), '..', 'dist', 'src', 'client', 'index.js')).href;

/**
 * The route table (src/contracts/routes.js) is the one contract module a command may load: it
 * holds methods and paths and imports nothing (checked below); the schemas load on demand.
 */
const HEAVY = /node_modules\/(zod|fastify|pg|pgvector|openai|@anthropic-ai|@huggingface|onnxruntime|prom-client|pino|ora|@inquirer)\/|(^|\/)server\/|\/src\/(adapters|services)\/|\/src\/contracts\/(?!routes\.js$)/;
const ROUTE_TABLE = join(dirname(BIN), '..', 'dist', 'src', 'contracts', 'routes.js');
const commandFiles = (sources: string[]) => sources.filter((s) => /(^|\/)commands\/[a-z-]+\.js$/.test(s)).map((s) => s.split('/').pop()).sort();

describe('what a command loads', () => {
  it('the bundle knows every chunk it ships', () => {
    expect(Object.keys(chunks)).toContain('entry.js');
    expect(Object.values(chunks).flatMap((c) => c.sources).some((s) => s.endsWith('dist/commands/recall.js'))).toBe(true);
  });

  it('the route table, which every call loads, imports nothing (so no zod and no schema)', () => {
    const table = readFileSync(ROUTE_TABLE, 'utf8');
    expect(table).toContain('/v1/recall');
    expect(table.match(/^\s*(import|export .* from)\b.*$/gm) ?? []).toEqual([]);
    expect(table).not.toMatch(/\bimport\(/);
  });

  it('--version loads neither commander nor any command', () => {
    const { sources } = cli(['--version']);
    expect(sources.filter((u) => HEAVY.test(u))).toEqual([]);
    expect(sources.some((s) => s.includes('node_modules/commander/'))).toBe(false);
    expect(commandFiles(sources)).toEqual(['entry.js']);
  });

  it('recall against a running server loads neither zod nor the server, pg, the model or HTTP/2', () => {
    const { sources, builtins } = cli(['recall', 'parse a CSV file', '--readonly', '--url', server.url]);
    expect(sources.filter((u) => HEAVY.test(u))).toEqual([]);
    expect(commandFiles(sources)).toContain('recall.js');
    expect(commandFiles(sources)).not.toContain('learn.js');
    expect(builtins).toContain('net');
    expect(builtins.filter((b) => ['http2', 'tls', 'crypto', 'readline', 'child_process'].includes(b))).toEqual([]);
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
    const { sources } = loadedBy(['--input-type=module', '-e', script]);
    expect(sources.some((u) => u.endsWith('/dist/src/client/index.js'))).toBe(true);
    expect(sources.filter((u) => HEAVY.test(u))).toEqual([]);
  });
});
