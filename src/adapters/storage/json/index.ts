import path from 'node:path';
import { targetCovers } from '../../../core/governance.js';
import { noopInstruments, type Instruments } from '../../../ports/observability.js';
import type { Storage } from '../../../ports/storage.js';
import { AuditLog } from './audit-log.js';
import { ensureDirDurable, removeStaleTemps } from './durable/fs-durable.js';
import { createJsonBillingRepository } from './billing-repo.js';
import { JsonJobQueue, queueOperations } from './jobs-repo.js';
import { createLearnRecorder } from './learn-record.js';
import { acquireLock } from './durable/lock.js';
import { MetaFile } from './meta-file.js';
import { createOutcomeRepository } from './outcomes-repo.js';
import { createPatternRepository } from './patterns-repo.js';
import { createRecallRecorders } from './recall-record.js';
import { JsonScopeDeleter, type DeletionStepHook } from './scope-deletion.js';
import { ScopeRegistry } from './scope-registry.js';
import {
  createAnalyticsRepository, createEvalRepository, createFeedbackRepository, createMetricsRepository,
  createSkillRepository,
} from './scope-repos.js';
import { createJsonSettingsStore } from './settings-repos.js';

export interface JsonStorageOptions {
  /** Root directory (SERVICE_DATA_PATH); created when missing. */
  dataPath: string;
  instruments?: Instruments;
  /** Journal size that makes a scope write a fresh snapshot (default 8 MiB). */
  compactAfterBytes?: number;
  /** Score vectors with the plain JS loop instead of WebAssembly SIMD (for comparison tests). */
  preferJsKernel?: boolean;
  /** Test seam of governance deletions: called after each step (crash tests stop there). */
  onDeletionStep?: DeletionStepHook;
}

export interface JsonStorage extends Storage {
  readonly kind: 'json';
  readonly dataPath: string;
  /** Snapshots every scope now and empties its journal (also happens on its own as journals grow). */
  compact(): Promise<void>;
}

const DEFAULT_COMPACT_AFTER_BYTES = 8 * 1024 * 1024;

/**
 * Times every repository call (storageOp) and refuses calls after close. `iterate` returns an
 * async iterable, not a promise, so it is only guarded.
 */
function instrumented<R extends object>(area: string, repo: R, guard: () => void, instruments: Instruments): R {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(repo) as [string, (...args: unknown[]) => unknown][]) {
    const operation = `${area}.${name}`;
    out[name] =
      name === 'iterate'
        ? (...args: unknown[]) => {
            guard();
            return fn.apply(repo, args);
          }
        : async (...args: unknown[]) => {
            guard();
            const started = performance.now();
            try {
              return await fn.apply(repo, args);
            } finally {
              instruments.storageOp('json', operation, (performance.now() - started) / 1000);
            }
          };
  }
  return out as R;
}

/**
 * The embedded default storage: one folder per scope under the data path
 * (tenants/<tenant>/projects/<project>/{snapshot,journal}.ndjson), everything served from
 * memory, every acknowledged write fsynced. See scope-store.ts for the durability design.
 * A second process (or instance) on the same data path is refused while the first lives.
 */
export async function createJsonStorage(opts: JsonStorageOptions): Promise<JsonStorage> {
  const dataPath = path.resolve(opts.dataPath);
  const instruments = opts.instruments ?? noopInstruments;
  await ensureDirDurable(dataPath);
  const lock = await acquireLock(dataPath);
  const registry = new ScopeRegistry(dataPath, {
    compactAfterBytes: opts.compactAfterBytes ?? DEFAULT_COMPACT_AFTER_BYTES,
    preferJsKernel: opts.preferJsKernel ?? false,
  });
  const audit = new AuditLog(dataPath);
  const meta = new MetaFile(dataPath);
  const settings = createJsonSettingsStore(dataPath);
  let jobQueue: JsonJobQueue;
  let deleter: JsonScopeDeleter;
  try {
    const started = performance.now();
    await removeStaleTemps(dataPath);
    await meta.load();
    await audit.init();
    await registry.loadAll();
    jobQueue = await JsonJobQueue.open(dataPath);
    deleter = new JsonScopeDeleter({ dataPath, registry, settings, jobs: jobQueue, audit, onStep: opts.onDeletionStep });
    // A deletion a crash interrupted is finished before anything is served: whole or gone.
    await deleter.replay();
    instruments.storageOp('json', 'load', (performance.now() - started) / 1000);
  } catch (err) {
    await registry.closeAll().catch(() => undefined);
    await lock.release();
    throw err;
  }

  let closed = false;
  let closing: Promise<void> | null = null;
  const guard = () => {
    if (closed) throw new Error(`JSON storage at ${dataPath} is closed`);
  };
  const wrap = <R extends object>(area: string, repo: R) => instrumented(area, repo, guard, instruments);

  const patterns = wrap('patterns', createPatternRepository(registry));
  const metrics = wrap('metrics', createMetricsRepository(registry));
  const analytics = wrap('analytics', createAnalyticsRepository(registry));
  const learn = wrap('learn', { record: createLearnRecorder(registry) });
  const recalls = wrap('recall', createRecallRecorders(registry));

  return {
    kind: 'json',
    dataPath,
    patterns,
    evals: wrap('evals', createEvalRepository(registry)),
    feedback: wrap('feedback', createFeedbackRepository(registry)),
    skills: wrap('skills', createSkillRepository(registry)),
    metrics,
    analytics,
    rollups: wrap('rollups', settings.rollups),
    projects: wrap('projects', settings.projects),
    billing: wrap('billing', createJsonBillingRepository(dataPath, patterns)),
    jobs: { ...wrap('jobs', queueOperations(jobQueue)), subscribe: (listener) => jobQueue.subscribe(listener) },
    audit: wrap('audit', {
      append: (e) => audit.append(e),
      list: (f) => audit.list(f),
      scrub: (target) => audit.scrub((e) => targetCovers(target, e)),
    } satisfies Storage['audit']),
    governance: wrap('governance', {
      countScope: (target, o) => deleter.countScope(target, o),
      deleteScope: (target, o) => deleter.deleteScope(target, o),
    } satisfies Storage['governance']),
    meta: wrap('meta', {
      getEmbeddingInfo: async () => meta.embedding,
      setEmbeddingInfo: (info) => meta.setEmbedding(info),
    } satisfies Storage['meta']),

    outcomes: wrap('outcomes', createOutcomeRepository(registry)),

    async recordRecall(scope, r) {
      // Copies taken before the write below changes anything.
      const page = await patterns.getMany(scope, r.page_ids);
      await recalls.record(scope, r);
      return page;
    },

    recordLookup: (scope, r) => recalls.lookup(scope, r),

    // Every recall's bookkeeping is one journal line the recall itself waits for: nothing is pending.
    settleRecallWrites: async () => undefined,

    recordLearn: (scope, r) => learn.record(scope, r),

    async ping() {
      guard();
      if (!(await lock.held())) throw new Error(`lost the lock on data path ${dataPath}`);
      const broken = registry.entries().find((e) => e.store.error) ?? null;
      if (broken) throw new Error(`journal of ${broken.store.dir} failed: ${broken.store.error!.message}`);
      if (audit.error) throw new Error(`audit log failed: ${audit.error.message}`);
    },

    async compact() {
      guard();
      for (const { store } of registry.entries()) await store.compact();
    },

    close() {
      closed = true;
      closing ??= (async () => {
        try {
          await registry.closeAll();
          await audit.close();
          await meta.close();
          await settings.close();
          await jobQueue.close();
        } finally {
          await lock.release();
        }
      })();
      return closing;
    },
  };
}
