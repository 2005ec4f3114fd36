import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ValidationError } from '../../../core/errors.js';
import { isValidRetentionDays, MAX_RETENTION_DAYS, MIN_RETENTION_DAYS } from '../../../core/retention.js';
import type { RollupResponse } from '../../../contracts/analytics.js';
import { ROLLUP_WINDOWS, type RollupWindow } from '../../../core/roi.js';
import type { Scope } from '../../../core/types.js';
import type { JudgeCacheRepository, ProjectSettingsRepository, RollupRepository } from '../../../ports/storage.js';
import { JUDGE_CACHE_MAX_ENTRIES, type CachedJudgement } from '../../../core/judge-cache-key.js';
import { atomicWriteFile, ensureDirDurable } from './durable/fs-durable.js';
import { isScopeIdName, scopeDir, TENANTS_DIR } from './ids.js';

/**
 * Small per-scope documents beside the scope's journal: rarely written, read whole, replaced
 * atomically (temp file + fsync + rename, so a crash leaves the old or the new version).
 *   tenants/<t>/projects/<p>/rollups.json   latest rollup per window
 *   tenants/<t>/projects/<p>/project.json   project settings (retention_days)
 *   tenants/<t>/tenant.json                 tenant settings (retention_days)
 *   tenants/<t>/projects/<p>/judge-cache.json  cached judge verdicts, oldest first (bounded)
 * Living inside the scope's folder, they go wherever the scope's data goes (deletion, backup).
 * The data-path lock makes this process the only writer, so documents are cached after the
 * first read and writes to one file are chained in call order.
 */
export const ROLLUPS_FILE = 'rollups.json';
export const PROJECT_FILE = 'project.json';
export const TENANT_FILE = 'tenant.json';
export const JUDGE_CACHE_FILE = 'judge-cache.json';

interface RollupsDoc {
  version: 1;
  rollups: Partial<Record<RollupWindow, RollupResponse>>;
}

interface SettingsDoc {
  version: 1;
  retention_days: number | null;
  updated_at: string | null;
}

interface JudgeCacheDoc {
  version: 1;
  /** Oldest first: the front is what goes when the project holds too many. */
  entries: ({ key: string } & CachedJudgement)[];
}

const EMPTY_SETTINGS: SettingsDoc = { version: 1, retention_days: null, updated_at: null };

class DocumentFiles {
  private readonly cache = new Map<string, unknown>();
  private readonly writes = new Map<string, Promise<unknown>>();

  /** The parsed document, or `empty` when the file does not exist. */
  async read<T>(file: string, empty: T, normalise: (raw: unknown) => T): Promise<T> {
    if (this.cache.has(file)) return this.cache.get(file) as T;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty;
      throw err;
    }
    let doc: T;
    try {
      doc = normalise(JSON.parse(text));
    } catch (err) {
      throw new Error(`corrupt JSON storage file ${file}: ${(err as Error).message}`);
    }
    // A write that finished while we were reading is newer: keep it.
    if (!this.cache.has(file)) this.cache.set(file, doc);
    return this.cache.get(file) as T;
  }

  /** Read-modify-write of one document, serialised per file; resolves once durable. */
  update<T>(file: string, empty: T, normalise: (raw: unknown) => T, change: (doc: T) => T): Promise<void> {
    const previous = this.writes.get(file) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(async () => {
      const next = change(await this.read(file, empty, normalise));
      await ensureDirDurable(path.dirname(file));
      await atomicWriteFile(file, [`${JSON.stringify(next, null, 2)}\n`]);
      this.cache.set(file, next);
    });
    this.writes.set(file, run);
    return run;
  }

  /** Drops cached documents under `dir` (their files were deleted). */
  async forget(dir: string): Promise<void> {
    await this.settle();
    const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep;
    for (const file of [...this.cache.keys()]) if (file.startsWith(prefix)) this.cache.delete(file);
  }

  /** Waits for every pending write (close). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.writes.values()]);
  }
}

function normaliseRollups(raw: unknown): RollupsDoc {
  const rollups: RollupsDoc['rollups'] = {};
  const stored = (raw as Partial<RollupsDoc> | null)?.rollups ?? {};
  for (const window of ROLLUP_WINDOWS) {
    const r = stored[window];
    if (r && typeof r === 'object' && r.window === window) rollups[window] = r;
  }
  return { version: 1, rollups };
}

function normaliseSettings(raw: unknown): SettingsDoc {
  const doc = raw as Partial<SettingsDoc> | null;
  return {
    version: 1,
    retention_days: isValidRetentionDays(doc?.retention_days) ? doc.retention_days : null,
    updated_at: typeof doc?.updated_at === 'string' ? doc.updated_at : null,
  };
}

function normaliseJudgeCache(raw: unknown): JudgeCacheDoc {
  const entries = (raw as Partial<JudgeCacheDoc> | null)?.entries;
  if (!Array.isArray(entries)) return { version: 1, entries: [] };
  // An entry of another shape (a hand edit, a newer version) is dropped, never served.
  return { version: 1, entries: entries.filter((e) => e && typeof e.key === 'string' && Array.isArray(e.scores) && e.scores.length > 0 && typeof e.tokens === 'object') };
}

function assertDays(days: number | null): void {
  if (days !== null && !isValidRetentionDays(days)) {
    throw new ValidationError('invalid retention_days', [
      { path: 'retention_days', message: `must be a whole number from ${MIN_RETENTION_DAYS} to ${MAX_RETENTION_DAYS}, or null` },
    ]);
  }
}

export interface JsonSettingsStore {
  rollups: RollupRepository;
  projects: ProjectSettingsRepository;
  judgeCache: JudgeCacheRepository;
  /** Waits for in-flight writes, then forgets cached documents under `dir` (deleted). */
  forget(dir: string): Promise<void>;
  /** Waits for in-flight writes. */
  close(): Promise<void>;
}

export function createJsonSettingsStore(dataPath: string): JsonSettingsStore {
  const files = new DocumentFiles();
  const rollupsFile = (scope: Scope) => path.join(scopeDir(dataPath, scope), ROLLUPS_FILE);
  const projectFile = (scope: Scope) => path.join(scopeDir(dataPath, scope), PROJECT_FILE);
  const tenantFile = (tenantId: string) => {
    if (!isScopeIdName(tenantId)) {
      throw new ValidationError('invalid tenant id', [{ path: 'tenant_id', message: 'must match ^[A-Za-z0-9_-]{1,64}$' }]);
    }
    return path.join(dataPath, TENANTS_DIR, tenantId, TENANT_FILE);
  };
  const emptyRollups = (): RollupsDoc => ({ version: 1, rollups: {} });
  const judgeCacheFile = (scope: Scope) => path.join(scopeDir(dataPath, scope), JUDGE_CACHE_FILE);
  const emptyJudgeCache = (): JudgeCacheDoc => ({ version: 1, entries: [] });

  const rollups: RollupRepository = {
    async put(scope, rollup) {
      if (!(ROLLUP_WINDOWS as readonly string[]).includes(rollup.window)) throw new ValidationError(`unknown rollup window ${rollup.window}`);
      const copy = structuredClone(rollup);
      await files.update(rollupsFile(scope), emptyRollups(), normaliseRollups, (doc): RollupsDoc => ({
        version: 1,
        rollups: { ...doc.rollups, [copy.window]: copy },
      }));
    },
    async get(scope, window) {
      const doc = await files.read(rollupsFile(scope), emptyRollups(), normaliseRollups);
      const found = doc.rollups[window];
      return found ? structuredClone(found) : null;
    },
  };

  const projects: ProjectSettingsRepository = {
    async getRetention(scope) {
      const project = await files.read(projectFile(scope), EMPTY_SETTINGS, normaliseSettings);
      const tenant = await files.read(tenantFile(scope.tenant_id), EMPTY_SETTINGS, normaliseSettings);
      return { project_days: project.retention_days, tenant_days: tenant.retention_days };
    },
    async setProjectRetention(scope, days, at) {
      assertDays(days);
      await files.update(projectFile(scope), EMPTY_SETTINGS, normaliseSettings, (doc) => ({ ...doc, retention_days: days, updated_at: at }));
    },
    async setTenantRetention(tenantId, days, at) {
      assertDays(days);
      await files.update(tenantFile(tenantId), EMPTY_SETTINGS, normaliseSettings, (doc) => ({ ...doc, retention_days: days, updated_at: at }));
    },
  };

  const judgeCache: JudgeCacheRepository = {
    async get(scope, key) {
      const doc = await files.read(judgeCacheFile(scope), emptyJudgeCache(), normaliseJudgeCache);
      const found = doc.entries.find((e) => e.key === key);
      if (!found) return null;
      const { key: _key, ...judgement } = found;
      return structuredClone(judgement);
    },
    async put(scope, key, judgement) {
      const entry = { key, ...structuredClone(judgement) };
      await files.update(judgeCacheFile(scope), emptyJudgeCache(), normaliseJudgeCache, (doc): JudgeCacheDoc => {
        const entries = doc.entries.filter((e) => e.key !== key);
        entries.push(entry);
        return { version: 1, entries: entries.slice(-JUDGE_CACHE_MAX_ENTRIES) };
      });
    },
  };

  return { rollups, projects, judgeCache, forget: (dir) => files.forget(dir), close: () => files.settle() };
}
