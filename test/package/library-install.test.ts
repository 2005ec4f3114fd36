import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../api/helpers.js';

/**
 * SLOW (about a minute on a busy 2-core box; its own file so it can be left out): what a
 * library user gets. Packs this package, installs the tarball into a scratch folder OFFLINE
 * (npm cache only, optional dependencies omitted), type-checks a script that imports only
 * the public entry against the installed declarations, and runs it against a live server,
 * reaching every client area (jobs, keys, llm, analytics, governance, billing) through it.
 *
 * The scratch lockfile is this repository's, minus devDependencies: npm's offline mode has
 * the package tarballs in its cache (from `npm ci`) but not the registry's metadata that a
 * lockfile-less resolve needs. Needs `npm run build` first (dist/ is what gets packed).
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

interface LockEntry { dev?: boolean; [field: string]: unknown }
interface Lockfile { packages: Record<string, LockEntry> }

/** The runtime dependency of the server that a client user should not have to install. */
async function modelRuntimeIsHardDependency(): Promise<boolean> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  return Boolean(pkg.dependencies?.['@huggingface/transformers']);
}

async function writeScratchProject(dir: string, tarball: string): Promise<void> {
  const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as Lockfile;
  const root = lock.packages[''];
  const packages: Record<string, LockEntry> = {
    '': { name: 'scratch', dependencies: { 'agent-memory-service': `file:${tarball}` } },
    'node_modules/agent-memory-service': {
      version: root.version, resolved: `file:${tarball}`, license: root.license, bin: root.bin, engines: root.engines,
      dependencies: root.dependencies, optionalDependencies: root.optionalDependencies,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    // Workspace links (packages/client) are this repository's folders, not the package's dependencies.
    if (path.startsWith('node_modules/') && !entry.dev && !entry.link) packages[path] = entry;
  }
  await writeFile(join(dir, 'package-lock.json'), JSON.stringify({ name: 'scratch', lockfileVersion: 3, requires: true, packages }));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module', dependencies: { 'agent-memory-service': `file:${tarball}` } }));
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true,
      outDir: 'out', typeRoots: [join(ROOT, 'node_modules/@types')], types: ['node'],
    },
    files: ['use-client.ts'],
  }));
  await copyFile(join(ROOT, 'test/fixtures/library-consumer/use-client.ts'), join(dir, 'use-client.ts'));
}

async function sizeInMb(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-sk', dir]);
  return Math.round(Number(stdout.split('\t')[0]) / 1024);
}

describe('library install (slow: packs and installs the package)', () => {
  let scratch: string;
  let service: TestServer;
  let url: string;

  beforeAll(async () => {
    await stat(join(ROOT, 'dist/src/client/index.js')).catch(() => {
      throw new Error('dist/ is missing: run `npm run build` before this test');
    });
    scratch = await mkdtemp(join(tmpdir(), 'svc-library-'));
    service = await startServer();
    url = await service.server.listen({ host: '127.0.0.1', port: 0 }).then(() => {
      const { port } = service.server.server.address() as AddressInfo;
      return `http://127.0.0.1:${port}`;
    });
  }, 120_000);

  afterAll(async () => {
    await service?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('installs offline from the npm cache, type-checks and runs a script on the public entry', async () => {
    const { stdout: packed } = await run(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch], { cwd: ROOT });
    const tarball = (JSON.parse(packed) as { filename: string }[])[0].filename;
    await writeScratchProject(scratch, tarball);

    // While the model runtime is a hard dependency, its install script downloads binaries
    // (and fails offline): skip scripts then, and hold the size to account only once it is
    // optional. Afterwards every dependency's script runs, as in a user's install.
    const hardRuntime = await modelRuntimeIsHardDependency();
    const install = ['ci', '--offline', '--omit=optional', '--no-audit', '--no-fund', ...(hardRuntime ? ['--ignore-scripts'] : [])];
    await run(npm, install, { cwd: scratch, maxBuffer: 16 * 1024 * 1024 });
    const installedMb = await sizeInMb(join(scratch, 'node_modules'));
    if (!hardRuntime) expect(installedMb, `node_modules is ${installedMb} MB`).toBeLessThan(150);

    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: scratch });
    const { stdout } = await run(process.execPath, [join(scratch, 'out/use-client.js'), url], { cwd: scratch });
    const result = JSON.parse(stdout) as { health: string; stored: string | null; best: string | null; rejected: number | null; areas: unknown };
    expect(result.health).toBe('ok');
    expect(result.stored).toMatch(/^patterns\//);
    expect(result.best).toBe(result.stored);
    expect(result.rejected).toBe(422);
    // Every area through the one ServiceClient: jobs (a job waited for, its result checked
    // with the contract the installed package loads), keys (dev auth: NotFoundError), llm,
    // analytics, governance with its retention, billing.
    expect(result.areas).toEqual({
      jobs: 0,
      aging_dry_run: true,
      keys: 'not found',
      feedback: 0,
      events: 2,
      retention_days: 365,
      exported: 1,
      plan: 'sandbox',
    });
  }, 300_000);
});
