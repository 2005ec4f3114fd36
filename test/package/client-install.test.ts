import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/**
 * SLOW (about a minute): what a user of the small client package gets. `npm pack` of the
 * workspace packages/client (its prepack builds it from src/client), installed OFFLINE into a
 * scratch project: only the package and undici land in node_modules, under 10 MB; a script
 * that imports only 'agent-memory-client' type-checks against the shipped declarations
 * (skipLibCheck off, so they are checked too) and runs against a real `service serve`.
 * The scratch lockfile takes undici's entry from this repository's (offline npm has the
 * tarball in its cache, not the registry metadata a lockfile-less install needs).
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const run = promisify(execFile);

interface LockEntry { [field: string]: unknown }

/** A user's environment: none of the npm_* variables `npm test` set for this process. */
function userEnv(): NodeJS.ProcessEnv {
  const env = childEnv();
  for (const name of Object.keys(env)) if (name.startsWith('npm_') || name === 'INIT_CWD') delete env[name];
  return env;
}

async function writeScratchProject(dir: string, tarball: string): Promise<void> {
  const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const client = JSON.parse(await readFile(join(ROOT, 'packages/client/package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
  const dependencies = { 'agent-memory-client': `file:${tarball}` };
  const packages: Record<string, LockEntry> = {
    '': { name: 'scratch', dependencies },
    'node_modules/agent-memory-client': { version: client.version, resolved: `file:${tarball}`, dependencies: client.dependencies },
  };
  for (const name of Object.keys(client.dependencies)) packages[`node_modules/${name}`] = lock.packages[`node_modules/${name}`];
  await writeFile(join(dir, 'package-lock.json'), JSON.stringify({ name: 'scratch', lockfileVersion: 3, requires: true, packages }));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module', dependencies }));
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false,
      outDir: 'out', typeRoots: [join(ROOT, 'node_modules/@types')], types: ['node'],
    },
    files: ['use-client.ts'],
  }));
  await copyFile(join(ROOT, 'test/fixtures/client-consumer/use-client.ts'), join(dir, 'use-client.ts'));
}

describe('client package (slow: packs and installs packages/client)', () => {
  let scratch: string;
  let server: ServerHandle;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'svc-client-pkg-'));
    server = await startServer({ dataPath: join(scratch, 'data') });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('packs, installs offline under 10 MB with undici only, type-checks and runs a script against a server', async () => {
    const { stdout: packed } = await run('npm', ['pack', '-w', 'agent-memory-client', '--json', '--pack-destination', scratch], {
      cwd: ROOT, env: userEnv(), maxBuffer: 16 * 1024 * 1024,
    });
    const [info] = JSON.parse(packed) as { filename: string; files: { path: string }[] }[];
    const shipped = info.files.map((f) => f.path);
    expect(shipped).toContain('dist/index.js');
    expect(shipped).toContain('dist/index.d.ts');
    expect(shipped).toContain('README.md');
    expect(shipped.filter((p) => !p.startsWith('dist/') && p !== 'README.md' && p !== 'package.json')).toEqual([]);

    const project = join(scratch, 'project');
    await run('mkdir', [project]);
    await writeScratchProject(project, join(scratch, info.filename));
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: project, env: userEnv(), maxBuffer: 16 * 1024 * 1024 });

    const installed = (await readdir(join(project, 'node_modules'))).filter((n) => !n.startsWith('.')).sort();
    expect(installed).toEqual(['agent-memory-client', 'undici']);
    const { stdout: du } = await run('du', ['-sk', join(project, 'node_modules')]);
    const kb = Number(du.split('\t')[0]);
    expect(kb, `node_modules is ${kb} KB`).toBeLessThan(10 * 1024);

    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: project });
    const { stdout } = await run(process.execPath, [join(project, 'out/use-client.js'), server.url], { cwd: project, env: userEnv() });
    const result = JSON.parse(stdout) as { stored: string | null; best: string | null; listed: string[]; [k: string]: unknown };
    expect(result).toMatchObject({
      health: 'ok', tier: 'duplicate', rejected: { status: 422, code: 'validation_failed' }, missing: true, jobs: 0, unreachable: true,
    });
    expect(result.stored).toMatch(/^patterns\//);
    expect(result.best).toBe(result.stored);
    expect(result.listed).toEqual([result.stored]);
  }, 300_000);
});
