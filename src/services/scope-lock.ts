import type { Scope } from '../core/types.js';
import type { Storage } from '../ports/storage.js';

/**
 * Serialises decisions per scope (docs/behavior.md "Faults"): within this process by a promise chain per
 * scope, across processes by the store's own scope lock when it has one. Learn's
 * "near-identical or new?" check and its write are one decision, so 20 identical learns at
 * once store one pattern, as 20 in a row do.
 */
export class ScopeLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly storage: Storage) {}

  run<T>(scope: Scope, fn: () => Promise<T>): Promise<T> {
    const key = `${scope.tenant_id}\u0000${scope.project_id}`;
    const previous = this.tails.get(key) ?? Promise.resolve();
    const guarded = () => (this.storage.withScopeLock ? this.storage.withScopeLock(scope, fn) : fn());
    const result = previous.then(guarded, guarded);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    // The map forgets a scope once its last waiter is done, so it holds only busy scopes.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}

const locksByStorage = new WeakMap<Storage, ScopeLocks>();

/** The one ScopeLocks of a storage (services are plain functions; the locks live beside the store). */
export function scopeLocks(storage: Storage): ScopeLocks {
  let locks = locksByStorage.get(storage);
  if (!locks) {
    locks = new ScopeLocks(storage);
    locksByStorage.set(storage, locks);
  }
  return locks;
}
