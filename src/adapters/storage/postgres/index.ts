import type { Config } from '../../../config/index.js';
import { Semaphore } from '../../semaphore.js';
import { noopInstruments, silentLogger, type Instruments, type Logger } from '../../../ports/observability.js';
import type { Storage } from '../../../ports/storage.js';
import { assertSchemaCurrent, revisionLabel } from '../../migrations/index.js';
import { createBillingRepository } from './billing.js';
import { Db } from './db.js';
import { createAnalyticsRepository, createAuditRepository, createMetaRepository } from './global.js';
import { createGovernanceRepository } from './governance.js';
import { createPostgresJobRepository } from './jobs.js';
import { createLearnRecorder } from './learn-record.js';
import { createPatternRepository } from './patterns.js';
import { PlannerStatistics } from './planner-stats.js';
import { createOutcomeRepository } from './outcomes.js';
import { createLookupRecorder, createRecallRecorder } from './recall-record.js';
import { checkOnPool, createServicePool, type PostgresPool } from './pool.js';
import { createEvalRepository, createFeedbackRepository, createMetricsRepository, createSkillRepository } from './scoped.js';
import { createProjectSettingsRepository, createRollupRepository } from './settings.js';

export interface PostgresStorageOptions {
  instruments?: Instruments;
  logger?: Logger;
  /** Folder of migrations the schema must match (default: the package's migrations/). */
  migrationsDir?: string;
  /**
   * The process's shared pool (src/app.ts; made by createServicePool with `search: true`): the
   * storage uses it and leaves ending it to its owner. Without one the storage opens its own
   * and ends it on close.
   */
  pool?: PostgresPool;
}

/** pgvector 0.8 introduced iterative index scans, which filtered search relies on. */
const MIN_PGVECTOR = [0, 8];

/** First key of the scope advisory locks (the second is a hash of the scope), apart from other locks. */
const SCOPE_LOCK_CLASS = 18_004;

/**
 * PostgreSQL + pgvector storage. Connects, then refuses to start unless the schema is at this
 * build's latest migration (the error names `service migrate up`) and pgvector is new enough.
 * Later connection loss surfaces as StorageUnavailableError (HTTP 503); the pool replaces broken
 * connections, so service resumes by itself once the database is back.
 */
export async function createPostgresStorage(config: Config, opts: PostgresStorageOptions = {}): Promise<Storage> {
  if (!config.storage.databaseUrl) throw new Error('SERVICE_DATABASE_URL is required for PostgreSQL storage');
  const logger = opts.logger ?? silentLogger;
  const ownsPool = !opts.pool;
  const pool = opts.pool ?? createServicePool(config, { logger, search: true });
  await checkOnPool(pool, ownsPool, config.storage.databaseUrl, async () => {
    await assertSchemaCurrent(pool, { dir: opts.migrationsDir });
    await assertPgvector(pool);
  });

  const db = new Db(pool, opts.instruments ?? noopInstruments, logger);
  // The queue shares the pool; its LISTEN connection is its own (a pooled client can't wait).
  const jobs = createPostgresJobRepository(db, { listenUrl: config.storage.databaseUrl, logger });
  const plannerStats = new PlannerStatistics(db, logger);
  plannerStats.start();
  let closed = false;
  const lockSlots = new Semaphore(Math.max(1, config.storage.db.poolMax - 1));
  return {
    kind: 'postgres',
    patterns: createPatternRepository(db, plannerStats),
    evals: createEvalRepository(db),
    feedback: createFeedbackRepository(db),
    skills: createSkillRepository(db),
    metrics: createMetricsRepository(db),
    analytics: createAnalyticsRepository(db, logger),
    rollups: createRollupRepository(db),
    projects: createProjectSettingsRepository(db),
    audit: createAuditRepository(db),
    meta: createMetaRepository(db),
    governance: createGovernanceRepository(db, (n) => plannerStats.noteWrites(n)),
    jobs,
    billing: createBillingRepository(db),
    outcomes: createOutcomeRepository(db),
    recordRecall: createRecallRecorder(db, plannerStats, logger),
    recordLookup: createLookupRecorder(db, logger),
    // Each recall's bookkeeping is one statement its caller awaits (lookups: services/lookup-events.ts).
    settleRecallWrites: async () => undefined,
    recordLearn: createLearnRecorder(db, plannerStats, logger),
    async ping() {
      await db.query('SELECT 1', [], 'ping');
    },
    withScopeLock(scope, fn) {
      // The lock lives in a transaction of its own connection and ends with it; `fn` works on
      // other pooled connections. Callers hold an in-process lock first, so each process has
      // at most one connection waiting here per scope (no pool exhaustion). A pool of one
      // connection cannot hold the lock and work at once: only the in-process lock applies.
      // Locks of different scopes held at once are capped one below the pool size, so at least
      // one connection stays free for the work done under them (no starvation).
      if (config.storage.db.poolMax < 2) return fn();
      return lockSlots.run(() =>
        db.withLock('scope.lock', 'SELECT pg_advisory_xact_lock($1, hashtext($2))', [SCOPE_LOCK_CLASS, `${scope.tenant_id}/${scope.project_id}`], fn),
      );
    },
    async schemaRevision() {
      const res = await db.query<{ version: number; name: string }>(
        'SELECT version, name FROM schema_migrations ORDER BY version DESC LIMIT 1',
        [],
        'schemaRevision',
      );
      return res.rows.length ? revisionLabel(res.rows[0]) : null;
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([jobs.close(), plannerStats.close()]);
      if (ownsPool) await pool.end();
    },
  };
}

async function assertPgvector(pool: Db['pool']): Promise<void> {
  const res = await pool.query<{ v: string | null }>("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'");
  const version = res.rows[0]?.v;
  if (!version) throw new Error('the pgvector extension is not installed in this database: run `service migrate up`');
  const [major, minor] = version.split('.').map(Number);
  if (major < MIN_PGVECTOR[0] || (major === MIN_PGVECTOR[0] && minor < MIN_PGVECTOR[1])) {
    throw new Error(`pgvector ${version} is too old: 0.8 or newer is needed for filtered vector search`);
  }
}

export { createServicePool, type PostgresPool } from './pool.js';
