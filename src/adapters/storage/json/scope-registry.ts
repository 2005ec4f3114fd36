import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Scope } from '../../../core/types.js';
import { assertScope, isScopeIdName, PROJECTS_DIR, scopeDir, scopeKey, TENANTS_DIR } from './ids.js';
import { ScopeStore, type ScopeStoreOptions } from './scope-store.js';

async function subdirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && isScopeIdName(e.name)).map((e) => e.name).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * The scopes of a data path. All existing scopes are loaded at open (everything is served
 * from memory); a scope that does not exist yet gets a directory only on its first write,
 * so reads of unknown scopes never touch the disk.
 */
export class ScopeRegistry {
  private readonly stores = new Map<string, { scope: Scope; store: ScopeStore }>();

  constructor(
    private readonly dataPath: string,
    private readonly opts: ScopeStoreOptions,
  ) {}

  async loadAll(): Promise<void> {
    const tenantsDir = path.join(this.dataPath, TENANTS_DIR);
    for (const tenant of await subdirs(tenantsDir)) {
      for (const project of await subdirs(path.join(tenantsDir, tenant, PROJECTS_DIR))) {
        const scope = { tenant_id: tenant, project_id: project };
        const store = await ScopeStore.load(scopeDir(this.dataPath, scope), this.opts);
        this.stores.set(scopeKey(scope), { scope, store });
      }
    }
  }

  /** The scope's store, or null when it has never been written (after validating the ids). */
  forRead(scope: Scope): ScopeStore | null {
    assertScope(scope);
    return this.stores.get(scopeKey(scope))?.store ?? null;
  }

  /** The scope's store, created (in memory; on disk at its first write) when missing. */
  forWrite(scope: Scope): ScopeStore {
    assertScope(scope);
    const key = scopeKey(scope);
    let entry = this.stores.get(key);
    if (!entry) {
      const own = { tenant_id: scope.tenant_id, project_id: scope.project_id };
      entry = { scope: own, store: ScopeStore.empty(scopeDir(this.dataPath, own), this.opts) };
      this.stores.set(key, entry);
    }
    return entry.store;
  }

  entries(): { scope: Scope; store: ScopeStore }[] {
    return [...this.stores.values()];
  }

  async closeAll(): Promise<void> {
    const results = await Promise.allSettled([...this.stores.values()].map((e) => e.store.close()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
