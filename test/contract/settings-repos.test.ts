/**
 * The rollups and project-settings repositories (Storage.rollups, Storage.projects): one
 * behavioural suite, run on JSON storage always and on PostgreSQL when it is reachable.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createJsonStorage } from '../../src/adapters/storage/json/index.js';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/index.js';
import { computeRollup } from '../../src/core/roi.js';
import type { Storage } from '../../src/ports/storage.js';
import { createTestDatabase, pgConfig, requirePostgres, reusableSchema, type TestDatabase } from '../support/pg.js';

interface Opened {
  storage: Storage;
  /** Closes the storage and opens the same data again (persistence). */
  reopen(): Promise<Storage>;
  cleanup(): Promise<void>;
}

const A = { tenant_id: 'acme', project_id: 'web' };
const B = { tenant_id: 'acme', project_id: 'api' };
const OTHER_TENANT = { tenant_id: 'globex', project_id: 'web' };
const NOW = new Date('2025-05-05T05:05:05.000Z');

function sampleRollup(window: 'hourly' | 'daily' | 'weekly', evalScore: number) {
  return computeRollup(window, [
    { at: NOW.toISOString(), kind: 'learn', stored: true, eval_score: evalScore, latency_ms: 12 },
    { at: NOW.toISOString(), kind: 'recall', best_similarity: 0.8, best_tier: 'adapt', matches: 3, latency_ms: 7 },
  ], NOW);
}

function runSettingsContract(name: string, open: () => Promise<Opened>): void {
  describe(`${name}: rollups and project settings`, () => {
    let opened: Opened | null = null;
    afterEach(async () => {
      await opened?.cleanup();
      opened = null;
    });

    it('stores the latest rollup per scope and window, and keeps it across a reopen', async () => {
      opened = await open();
      let { storage } = opened;
      expect(await storage.rollups.get(A, 'daily')).toBeNull();

      await storage.rollups.put(A, sampleRollup('daily', 4));
      const replacement = sampleRollup('daily', 9);
      await storage.rollups.put(A, replacement);
      await storage.rollups.put(A, sampleRollup('hourly', 1));
      await storage.rollups.put(B, sampleRollup('daily', 2));

      expect(await storage.rollups.get(A, 'daily')).toEqual(replacement);
      expect((await storage.rollups.get(A, 'hourly'))?.learn.avg_eval_score).toBe(1);
      expect(await storage.rollups.get(A, 'weekly')).toBeNull();
      expect((await storage.rollups.get(B, 'daily'))?.learn.avg_eval_score).toBe(2);
      expect(await storage.rollups.get(OTHER_TENANT, 'daily')).toBeNull();

      storage = await opened.reopen();
      expect(await storage.rollups.get(A, 'daily')).toEqual(replacement);
    });

    it('returns copies: changing a returned rollup changes nothing stored', async () => {
      opened = await open();
      const { storage } = opened;
      await storage.rollups.put(A, sampleRollup('weekly', 6));
      const got = await storage.rollups.get(A, 'weekly');
      got!.roi_score = 0;
      expect((await storage.rollups.get(A, 'weekly'))!.roi_score).toBeGreaterThan(0);
    });

    it('keeps project and tenant retention per scope, null clears, values persist', async () => {
      opened = await open();
      let { storage } = opened;
      expect(await storage.projects.getRetention(A)).toEqual({ project_days: null, tenant_days: null });

      await storage.projects.setProjectRetention(A, 30, NOW.toISOString());
      await storage.projects.setTenantRetention('acme', 90, NOW.toISOString());
      expect(await storage.projects.getRetention(A)).toEqual({ project_days: 30, tenant_days: 90 });
      expect(await storage.projects.getRetention(B)).toEqual({ project_days: null, tenant_days: 90 });
      expect(await storage.projects.getRetention(OTHER_TENANT)).toEqual({ project_days: null, tenant_days: null });

      storage = await opened.reopen();
      expect(await storage.projects.getRetention(A)).toEqual({ project_days: 30, tenant_days: 90 });
      await storage.projects.setProjectRetention(A, null, NOW.toISOString());
      await storage.projects.setTenantRetention('acme', null, NOW.toISOString());
      expect(await storage.projects.getRetention(A)).toEqual({ project_days: null, tenant_days: null });
    });

    it('refuses retention values outside 1–36500 and bad tenant ids', async () => {
      opened = await open();
      const { storage } = opened;
      for (const days of [0, 36501, 2.5, Number.NaN]) {
        await expect(storage.projects.setProjectRetention(A, days, NOW.toISOString())).rejects.toMatchObject({ code: 'validation_failed' });
        await expect(storage.projects.setTenantRetention('acme', days, NOW.toISOString())).rejects.toMatchObject({ code: 'validation_failed' });
      }
      await expect(storage.projects.setTenantRetention('../etc', 5, NOW.toISOString())).rejects.toMatchObject({ code: 'validation_failed' });
      expect(await storage.projects.getRetention(A)).toEqual({ project_days: null, tenant_days: null });
    });
  });
}

runSettingsContract('json', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-settings-'));
  let storage: Storage = await createJsonStorage({ dataPath: dir });
  return {
    storage,
    async reopen() {
      await storage.close();
      storage = await createJsonStorage({ dataPath: dir });
      return storage;
    },
    async cleanup() {
      await storage.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

const hasPg = await requirePostgres('rollups and settings on PostgreSQL');
let database: Promise<TestDatabase> | null = null;
const db = () => (database ??= createTestDatabase('settings'));
const schemas = reusableSchema(db, 'settings');
afterAll(async () => {
  if (database) await (await database).drop();
});

describe.skipIf(!hasPg)('postgres', () => {
  runSettingsContract('postgres', async () => {
    const config = pgConfig((await schemas.next()).url);
    let storage = await createPostgresStorage(config);
    return {
      storage,
      async reopen() {
        await storage.close();
        storage = await createPostgresStorage(config);
        return storage;
      },
      cleanup: () => storage.close(),
    };
  });
});
