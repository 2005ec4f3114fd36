import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { targetCovers, type DeletionTarget } from '../../../core/governance.js';
import { UnavailableError } from '../../../core/errors.js';
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
  /** Targets being deleted: their scopes read as empty and refuse writes until the deletion ends. */
  private readonly deleting = new Set<DeletionTarget>();

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
    if (this.isBlocked(scope)) return null;
    return this.stores.get(scopeKey(scope))?.store ?? null;
  }

  /** The scope's store, created (in memory; on disk at its first write) when missing. */
  forWrite(scope: Scope): ScopeStore {
    assertScope(scope);
    if (this.isBlocked(scope)) {
      throw new UnavailableError(`project ${scope.tenant_id}/${scope.project_id} is being deleted; try again in a moment`);
    }
    const key = scopeKey(scope);
    let entry = this.stores.get(key);
    if (!entry) {
      const own = { tenant_id: scope.tenant_id, project_id: scope.project_id };
      entry = { scope: own, store: ScopeStore.empty(scopeDir(this.dataPath, own), this.opts) };
      this.stores.set(key, entry);
    }
    return entry.store;
  }

  /** Blocks the target's scopes (reads see nothing, writes are refused) until the returned release. */
  block(target: DeletionTarget): () => void {
    const own = { ...target };
    this.deleting.add(own);
    return () => this.deleting.delete(own);
  }

  /**
   * Takes the target's scopes out of the registry and closes their stores (in-flight journal
   * writes finish first). Their files stay for the caller to remove.
   */
  async detach(target: DeletionTarget): Promise<{ scope: Scope; store: ScopeStore }[]> {
    const found = [...this.stores.entries()].filter(([, e]) => targetCovers(target, e.scope));
    for (const [key] of found) this.stores.delete(key);
    await Promise.all(found.map(([, e]) => e.store.close()));
    return found.map(([, e]) => e);
  }

  /** The target's loaded scopes (blocked or not). */
  scopesOf(target: DeletionTarget): { scope: Scope; store: ScopeStore }[] {
    return [...this.stores.values()].filter((e) => targetCovers(target, e.scope));
  }

  private isBlocked(scope: Scope): boolean {
    for (const target of this.deleting) if (targetCovers(target, scope)) return true;
    return false;
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
