/**
 * The behavioural suite every Storage adapter must pass, unchanged (JSON in
 * json-storage.test.ts, PostgreSQL in postgres-storage.test.ts). It talks to the Storage port
 * only. Vectors are small synthetic 8-d ones whose cosines are known exactly. Each test gets a
 * fresh storage from `make()`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/ports/storage.js';
import type { MakeStorage } from './storage.contract.fixtures.js';
import { patternContract } from './storage.contract.patterns.js';
import { repositoryContract } from './storage.contract.repos.js';
import { governanceContract } from './storage.contract.governance.js';
import { learnContract } from './storage.contract.learn.js';
import { quotaContract } from './storage.contract.quota.js';
import { hybridContract } from './storage.contract.hybrid.js';
import { tiesContract } from './storage.contract.ties.js';
import { outcomesContract } from './storage.contract.outcomes.js';

export * from './storage.contract.fixtures.js';

export function runStorageContract(name: string, make: MakeStorage): void {
  describe(`Storage contract: ${name}`, () => {
    let storage: Storage;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ storage, cleanup } = await make());
    });
    afterEach(async () => {
      await cleanup();
    });

    it('reports its kind and answers ping', async () => {
      expect(['json', 'postgres']).toContain(storage.kind);
      await expect(storage.ping()).resolves.toBeUndefined();
    });

    patternContract(() => storage);
    repositoryContract(() => storage);
    governanceContract(() => storage);
    learnContract(() => storage);
    quotaContract(() => storage);
    hybridContract(() => storage);
    tiesContract(() => storage);
    outcomesContract(() => storage);
  });
}
