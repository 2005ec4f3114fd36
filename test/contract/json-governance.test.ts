/**
 * Governance deletion in JSON storage, file by file: after deleting a project or a tenant no
 * file under the data path holds anything of it (scope folder gone, job payloads compacted
 * away, audit detail scrubbed), the neighbours' files are intact, and a process SIGKILLed at
 * any step of a deletion leaves, after restart, the target gone and the neighbours whole.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { createJsonStorage, type JsonStorage } from '../../src/adapters/storage/json/index.js';
import type { Scope } from '../../src/core/types.js';
import { runChild, transpileAdapter } from './json-storage.helpers.js';
import { populateScope, scopeView } from './storage.contract.governance.js';
import { SCOPE_A, SCOPE_B, SCOPE_C } from './storage.contract.fixtures.js';

const OPTS = { at: '2026-01-01T00:00:00.000Z', keepRunningOperations: ['governance_delete'] };

async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.join(e.parentPath, e.name));
  }
  return out.sort();
}

/** Every file's text, by path relative to the data path (the lock file excluded). */
async function contents(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const f of await allFiles(dir)) if (!f.endsWith('.lock')) out.set(path.relative(dir, f), await readFile(f, 'utf8'));
  return out;
}

/** Markers of what populateScope wrote for the scope with this base. */
const markers = (base: number) => [0, 1, 2, 3, 4].map((i) => `"task":"task number ${base + i}"`).concat([`"payload":{"n":${base}}`]);

function expectNothingOf(files: Map<string, string>, scope: Scope, base: number, tenantGone: boolean): void {
  for (const name of files.keys()) {
    expect(name.startsWith(path.join('tenants', scope.tenant_id, 'projects', scope.project_id))).toBe(false);
    if (tenantGone) expect(name.startsWith(path.join('tenants', scope.tenant_id) + path.sep)).toBe(false);
    expect(name.startsWith('deletions' + path.sep), `${name} left behind`).toBe(false);
  }
  for (const [name, text] of files) {
    for (const m of markers(base)) expect(text.includes(m), `${name} still holds ${m}`).toBe(false);
    const targetLines = text.split('\n').filter((l) => l.includes(`"tenant_id":"${scope.tenant_id}","project_id":"${scope.project_id}"`));
    for (const line of targetLines) expect(line.includes('detail of'), `${name} keeps audit detail: ${line}`).toBe(false);
  }
}

function expectAllOf(files: Map<string, string>, base: number): void {
  const all = [...files.values()].join('\n');
  for (const m of markers(base)) expect(all.includes(m), m).toBe(true);
}

describe('JSON governance deletion: file by file', () => {
  let dir: string;
  let storage: JsonStorage;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'json-gov-'));
    storage = await createJsonStorage({ dataPath: dir });
    await populateScope(storage, SCOPE_A, 0);
    await populateScope(storage, SCOPE_B, 100);
    await populateScope(storage, SCOPE_C, 200);
    await storage.projects.setTenantRetention('tenant-a', 90, OPTS.at);
  });
  afterEach(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a project: its folder, job payloads and audit detail are gone; the neighbours are intact', async () => {
    expectAllOf(await contents(dir), 0);
    await storage.governance.deleteScope({ ...SCOPE_A }, OPTS);
    const files = await contents(dir);
    expectNothingOf(files, SCOPE_A, 0, false);
    expectAllOf(files, 100);
    expectAllOf(files, 200);
    expect(files.has(path.join('tenants', 'tenant-a', 'tenant.json'))).toBe(true);
  });

  it('a tenant: the whole tenant folder goes; the other tenant is intact', async () => {
    await storage.governance.deleteScope({ tenant_id: 'tenant-a', project_id: null }, OPTS);
    const files = await contents(dir);
    expectNothingOf(files, SCOPE_A, 0, true);
    expectNothingOf(files, SCOPE_B, 100, true);
    expectAllOf(files, 200);
  });
});

describe('JSON governance deletion: SIGKILL mid-deletion', () => {
  let root: string;
  let adapter: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'json-gov-kill-'));
    adapter = await transpileAdapter(path.join(root, 'build'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  for (const step of ['intent', 'detached', 'renamed', 'jobs', 'audit', 'trash'] as const) {
    it(`killed after "${step}": on restart the project is gone and the neighbours are whole`, async () => {
      const data = path.join(root, `data-${step}`);
      let storage = await createJsonStorage({ dataPath: data });
      await populateScope(storage, SCOPE_A, 0);
      await populateScope(storage, SCOPE_B, 100);
      await populateScope(storage, SCOPE_C, 200);
      const b = await scopeView(storage, SCOPE_B);
      const c = await scopeView(storage, SCOPE_C);
      await storage.close();

      const child = await runChild(root, `kill-${step}.mjs`, `
        import { createJsonStorage } from ${JSON.stringify(adapter)};
        const s = await createJsonStorage({ dataPath: ${JSON.stringify(data)}, onDeletionStep: (step) => {
          if (step === ${JSON.stringify(step)}) { process.stdout.write('at ' + step + '\\n'); process.kill(process.pid, 'SIGKILL'); }
        } });
        await s.governance.deleteScope({ tenant_id: 'tenant-a', project_id: 'default' }, ${JSON.stringify(OPTS)});
        console.log('finished without being killed');
      `);
      const exit = await child.exited;
      expect(exit.signal, exit.stderr).toBe('SIGKILL');

      storage = await createJsonStorage({ dataPath: data });
      try {
        const a = await scopeView(storage, SCOPE_A);
        expect(a.patterns).toEqual([]);
        expect(a.jobs).toEqual([]);
        expect(a.feedback).toEqual([]);
        expect(a.rollup).toBeNull();
        for (const e of a.audit) expect(e.detail).toEqual({});
        expect(await scopeView(storage, SCOPE_B)).toEqual(b);
        expect(await scopeView(storage, SCOPE_C)).toEqual(c);
      } finally {
        await storage.close();
      }
      expectNothingOf(await contents(data), SCOPE_A, 0, false);
    });
  }
});
