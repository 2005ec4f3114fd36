import { ConfigError, effectiveAuthMode, type Config } from './config/index.js';
import { importOptional } from './core/optional-module.js';
import { BUNDLED_MODEL_ID, sameEmbeddingModel } from './core/embedding-model.js';
import { followStoredModel } from './core/embedding-choice.js';
import type { EmbeddingInfo, ReuseTierSettings, TierThresholds } from './core/types.js';
import { createQueryDots } from './adapters/storage/json/engine/index.js';
import { CachedEmbedder, createEmbedder } from './adapters/embeddings/index.js';
import { resolveReuseTiers, writeModelReuseTiers } from './adapters/embeddings/model-tiers.js';
import { bundledModelPath } from './adapters/embeddings/model-folder.js';
import { createLlm } from './adapters/llm/index.js';
import { createLogger } from './adapters/logging/logger.js';
import { openWhenReachable, type Opened } from './adapters/storage/connect.js';
import type { PostgresPool } from './adapters/storage/postgres/pool.js';
import { configuredSecrets } from './config/secrets.js';
import { PrometheusMetrics } from './adapters/metrics/prometheus.js';
import { createOidcVerifier } from './adapters/oidc/verifier.js';
import { createTracer, traceEmbedder, traceStorage } from './adapters/telemetry/index.js';
import { systemClock } from './ports/clock.js';
import type { Embedder } from './ports/embedder.js';
import type { KeyStore } from './ports/keys.js';
import type { Metrics } from './ports/metrics.js';
import type { RateLimiter } from './ports/rate-limiter.js';
import { createMemoryRateLimiter } from './adapters/rate-limit/memory.js';
import type { OidcVerifier } from './ports/oidc.js';
import { noopInstruments, silentLogger, type Instruments, type Logger } from './ports/observability.js';
import type { Storage } from './ports/storage.js';
import { noopTracer, type Tracer } from './ports/tracing.js';
import { copyStorage, type CopyReport } from './services/copy-data.js';
import type { ServiceDeps } from './services/deps.js';
import { JobRunner } from './services/job-runner.js';
import { lookupsRecorded } from './services/lookup-events.js';
import { Billing } from './services/billing.js';

const DUNNING_SWEEP_MS = 3_600_000;

/** The composed application: everything the server, jobs and local commands need. */
export interface App {
  deps: ServiceDeps;
  /** Counters, histograms and gauges behind /metrics (also deps.instruments). */
  metrics: Metrics;
  /** OIDC auth mode's token verifier; null in the other auth modes. */
  oidcVerifier: OidcVerifier | null;
  /** When createApp finished (deep health's uptime). */
  startedAt: Date;
  /** Rate limits (docs/behavior.md "Rate limits"): shared through PostgreSQL storage's database, else in memory. */
  rateLimiter: RateLimiter;
  /** The background job worker (started unless options.runJobs is false; stopped by close()). */
  jobRunner: JobRunner;
  /** Closes storage (files, locks, pools) and the embedder; safe to call twice. */
  close(): Promise<void>;
}

export interface CreateAppOptions {
  /**
   * Skips the stored-vs-current embedding model check. Only `service reindex` uses it: it
   * exists to repair exactly that mismatch.
   */
  allowEmbeddingMismatch?: boolean;
  /** Run queued jobs in this process (default true; `serve` needs it, one-shot commands may not). */
  runJobs?: boolean;
}

/**
 * Composition root: Config → adapters → ServiceDeps. `overrides` lets tests inject storage,
 * an embedder, an LLM, a clock or a logger; whatever is injected is still closed by close()
 * except a logger. An injected embedder is wrapped in the LRU cache like the real one.
 * DB auth mode's key store is deps.keyStore (the one place to reach it); it shares the one
 * PostgreSQL pool with PostgreSQL storage.
 */
export async function createApp(config: Config, overrides: Partial<ServiceDeps> = {}, options: CreateAppOptions = {}): Promise<App> {
  let tracer: Tracer = noopTracer;
  // Log lines written inside a span carry its trace id (the tracer is set just below).
  const traceField = () => {
    const id = tracer.currentTraceId();
    return id ? { trace_id: id } : {};
  };
  const logger: Logger = overrides.logger ?? createLogger({ level: config.observability.logLevel, json: config.observability.jsonLogs, mixin: traceField, secrets: configuredSecrets(config) });
  tracer = overrides.tracer ?? (await createTracer(config, { logger, instrumentPg: config.storage.kind === 'postgres' || effectiveAuthMode(config) === 'db' }));
  const metrics = new PrometheusMetrics();
  const instruments = overrides.instruments ?? metrics;
  const clock = overrides.clock ?? systemClock;

  const pool = await sharedPoolFor(config, { storageInjected: overrides.storage !== undefined, logger });
  let deferredStorage: Promise<Storage> | null = null;
  let storage: Storage;
  if (overrides.storage) {
    storage = overrides.storage;
  } else {
    try {
      const opened = await openStorage(config, { logger, instruments, pool, whenUnreachable: 'defer' });
      storage = opened.value;
      if (opened.deferred) deferredStorage = opened.ready;
    } catch (err) {
      await pool?.end().catch(() => undefined);
      throw err;
    }
  }
  let keyStore: KeyStore | null = null;
  let embedder: Embedder | undefined;
  let reuseTiers: ServiceDeps['reuseTiers'];
  try {
    if (effectiveAuthMode(config) === 'db') keyStore = await openKeyStore(config, { logger, instruments, pool });
    storage = withAuditLog(storage, keyStore);
    // docs/behavior.md "Embedding model of a store": a model the operator did not name follows the store's.
    if (!options.allowEmbeddingMismatch && !overrides.embedder && !deferredStorage) {
      config = { ...config, embedding: followStoredModel(config.embedding, await storage.meta.getEmbeddingInfo()) };
    }
    embedder = overrides.embedder
      ? wrapInCache(overrides.embedder, instruments)
      : await createEmbedder(config, { logger, instruments });
    if (!options.allowEmbeddingMismatch) {
      const check = checkEmbeddingInfo;
      const usedEmbedder = embedder;
      // A store still connecting (PostgreSQL down at startup) is checked once it answers.
      if (deferredStorage) {
        void deferredStorage.then((real) => check(real, usedEmbedder, logger)).catch((err: unknown) => logger.error({ err }, 'storage check failed'));
      } else {
        await check(storage, embedder, logger);
      }
    }
    reuseTiers = overrides.reuseTiers ?? await tiersFor(config, embedder);
    logger.info({ reuseTiers }, 'reuse-tier thresholds in force');
  } catch (err) {
    await closeQuietly({ embedder, keyStore, storage, pool });
    throw err;
  }
  const llm = 'llm' in overrides ? (overrides.llm ?? null) : createLlm(config, { logger, instruments, tracer });
  if (tracer.enabled) {
    storage = traceStorage(storage, tracer);
    embedder = traceEmbedder(embedder, tracer);
  }

  if (config.recall.verify.enabled && !llm) {
    await closeQuietly({ embedder, keyStore, storage, pool });
    // Fail at startup rather than answer every recall 422.
    throw new ConfigError('SERVICE_RECALL_VERIFY', 'verified recall needs an LLM: set SERVICE_LLM_PROVIDER and its API key');
  }
  const billing = overrides.billing ?? (await composeBilling(config, storage, clock, logger));
  const deps: ServiceDeps = { config, storage, embedder, llm, clock, logger, instruments, keyStore, tracer, reuseTiers, billing, queryDots: createQueryDots() };
  const jobRunner = new JobRunner(deps, {
    pollIntervalMs: config.jobs.pollIntervalSeconds * 1000,
    maxConcurrent: config.jobs.maxConcurrent,
    staleAfterMs: config.jobs.staleSeconds * 1000,
  });
  if (options.runJobs !== false) jobRunner.start();
  const rateLimiter = await rateLimiterFor(config, { clock, logger, instruments, sharedDatabase: pool !== null && config.storage.kind === 'postgres' && !overrides.storage });
  // Dunning warnings must appear even for a tenant that sends no requests.
  const dunningSweep = billing?.enabled && options.runJobs !== false
    ? setInterval(() => void billing.sweepDunning().catch((err: unknown) => logger.warn({ err }, 'dunning sweep failed')), DUNNING_SWEEP_MS).unref()
    : null;
  let closing: Promise<void> | null = null;
  return {
    deps,
    metrics,
    startedAt: clock.now(),
    oidcVerifier: oidcVerifierFor(config),
    jobRunner,
    rateLimiter,
    close() {
      closing ??= (async () => {
        if (dunningSweep) clearInterval(dunningSweep);
        // Jobs first: they still use the embedder and storage while they finish.
        await jobRunner.stop();
        // Lookup events still being appended are written before storage closes.
        await lookupsRecorded(deps);
        await embedder.close?.().catch((err: unknown) => logger.warn({ err }, 'embedder close failed'));
        await keyStore?.close().catch((err: unknown) => logger.warn({ err }, 'key store close failed'));
        try {
          await storage.close();
        } finally {
          // Last: storage and the key store stop using the shared pool first.
          await pool?.end().catch((err: unknown) => logger.warn({ err }, 'PostgreSQL pool close failed'));
        }
        await rateLimiter.close().catch((err: unknown) => logger.warn({ err }, 'rate limiter close failed'));
        await tracer.shutdown().catch((err: unknown) => logger.warn({ err }, 'tracer shutdown failed'));
      })();
      return closing;
    },
  };
}

/**
 * The limiter the server counts requests with: with PostgreSQL storage (several processes may
 * serve one database) the count shared through it, else this process's own.
 */
async function rateLimiterFor(
  config: Config,
  opts: { clock: ServiceDeps['clock']; logger: Logger; instruments: Instruments; sharedDatabase: boolean },
): Promise<RateLimiter> {
  const { windowSeconds, dbTimeoutMs } = config.http.rateLimit;
  if (!opts.sharedDatabase || !config.storage.databaseUrl) return createMemoryRateLimiter(opts.clock, windowSeconds * 1000);
  // Loaded only with PostgreSQL, like the storage itself.
  const { createPostgresRateLimiter } = await import('./adapters/storage/postgres/rate-limits.js');
  return createPostgresRateLimiter({
    connectionString: config.storage.databaseUrl, clock: opts.clock, logger: opts.logger, instruments: opts.instruments,
    windowMs: windowSeconds * 1000, timeoutMs: dbTimeoutMs, connectTimeoutMs: config.storage.db.connectTimeoutMs,
  });
}

/** Closes what createApp opened after a failed start, the shared pool after its users. */
async function closeQuietly(parts: { embedder?: Embedder; keyStore: KeyStore | null; storage: Storage; pool: PostgresPool | null }): Promise<void> {
  await parts.embedder?.close?.().catch(() => undefined);
  await parts.keyStore?.close().catch(() => undefined);
  await parts.storage.close().catch(() => undefined);
  await parts.pool?.end().catch(() => undefined);
}

/**
 * The one PostgreSQL pool of the process, or null when nothing uses PostgreSQL. PostgreSQL
 * storage and DB auth mode's key store both work on it (the key store opens no pool of its
 * own), so SERVICE_DB_POOL_MAX bounds the server's connections; createApp ends it last.
 */
async function sharedPoolFor(config: Config, opts: { storageInjected: boolean; logger: Logger }): Promise<PostgresPool | null> {
  const storageOnPostgres = config.storage.kind === 'postgres' && !opts.storageInjected;
  const keysOnPostgres = effectiveAuthMode(config) === 'db';
  // Without a URL the storage or key store itself refuses with its own message.
  if (!config.storage.databaseUrl || !(storageOnPostgres || keysOnPostgres)) return null;
  // Loaded only when PostgreSQL is used, so the embedded default never pays for (or breaks on) pg.
  const { createServicePool } = await import('./adapters/storage/postgres/pool.js');
  return createServicePool(config, { logger: opts.logger, search: storageOnPostgres });
}

export interface OpenStorageOptions {
  logger?: Logger;
  instruments?: Instruments;
  /** The process's shared pool (createApp); without one PostgreSQL storage opens and ends its own. */
  pool?: PostgresPool | null;
  /**
   * PostgreSQL not answering while SERVICE_DB_WAIT_SECONDS is unset: the server starts with a
   * stand-in answering 503 until it connects ('defer'); a one-shot command fails at once
   * ('fail'). With SERVICE_DB_WAIT_SECONDS both wait that long, then fail.
   */
  whenUnreachable?: 'defer' | 'fail';
}

/**
 * The one way to open the configured storage (SERVICE_STORAGE): the JSON store at
 * config.storage.dataPath or PostgreSQL at config.storage.databaseUrl. The server and `migrate-data` (for its
 * source and its target) both open storage here.
 */
export async function openStorage(config: Config, opts: OpenStorageOptions = {}): Promise<Opened<Storage>> {
  const logger = opts.logger ?? silentLogger;
  const instruments = opts.instruments ?? noopInstruments;
  if (config.storage.kind === 'postgres') {
    // Loaded only when chosen, so the embedded default never pays for (or breaks on) pg.
    const { createPostgresStorage } = await import('./adapters/storage/postgres/index.js');
    const waitSeconds = opts.whenUnreachable === 'fail' ? (config.storage.db.waitSeconds ?? 0) : config.storage.db.waitSeconds;
    return openWhenReachable({
      what: 'PostgreSQL storage', connect: () => createPostgresStorage(config, { logger, instruments, pool: opts.pool ?? undefined }), waitSeconds,
      logger, constants: { kind: 'postgres' },
    });
  }
  const { createJsonStorage } = await import('./adapters/storage/json/index.js');
  const value = await createJsonStorage({ dataPath: config.storage.dataPath, instruments });
  return { value, ready: Promise.resolve(value), deferred: false };
}

async function openKeyStore(config: Config, opts: { logger: Logger; instruments: Instruments; pool: PostgresPool | null }): Promise<KeyStore> {
  // Loaded only in DB auth mode, like the PostgreSQL storage.
  const { createPostgresKeyStore } = await import('./adapters/storage/postgres/keys.js');
  const opened = await openWhenReachable({
    what: 'PostgreSQL key store',
    connect: () => createPostgresKeyStore(config, { logger: opts.logger, instruments: opts.instruments, pool: opts.pool ?? undefined }),
    waitSeconds: config.storage.db.waitSeconds,
    logger: opts.logger,
  });
  return opened.value;
}

/**
 * The audit-log decision. Audit events (failed logins, key operations, deletions, redactions)
 * go to storage.audit. In DB auth mode over JSON storage that is the key store's audit table
 * in PostgreSQL, not the JSON files: the events about tenants and keys stay in the database
 * that holds them, shared by every server process on it, and a governance deletion scrubs
 * them there with the keys it revokes (services/governance-delete.ts). PostgreSQL storage has
 * that table already, and the other auth modes have no key store: storage keeps its own log.
 */
function withAuditLog(storage: Storage, keyStore: KeyStore | null): Storage {
  if (keyStore === null || storage.kind === 'postgres') return storage;
  return { ...storage, audit: keyStore.audit };
}

/** Billing counts usage on every storage; it enforces plans only with PAYMENT_SECRET_KEY (Stripe). */
async function composeBilling(config: Config, storage: Storage, clock: ServiceDeps['clock'], logger: Logger): Promise<Billing | undefined> {
  if (!storage.billing) return undefined;
  const { secretKey, webhookSecret, apiBaseUrl } = config.payment;
  // Loaded only when billing is on: self-hosted servers never load the payment SDK.
  const payments = secretKey
    ? (await importOptional(() => import('./adapters/payments/stripe.js'), 'billing (PAYMENT_SECRET_KEY)', 'npm install stripe@23'))
      .createStripeProcessor({ secretKey, webhookSecret, apiBaseUrl })
    : null;
  return new Billing({ config, clock, logger, repo: storage.billing, payments });
}

/** Built here, not in the server, so the server never touches an adapter (docs/behavior.md "Layers"). */
function oidcVerifierFor(config: Config): OidcVerifier | null {
  const { issuer, audience, jwksUrl } = config.auth.oidc;
  if (effectiveAuthMode(config) !== 'oidc' || !issuer) return null;
  return createOidcVerifier({ issuer, audience, jwksUrl });
}

function wrapInCache(embedder: Embedder, instruments: ServiceDeps['instruments']): Embedder {
  return embedder instanceof CachedEmbedder ? embedder : new CachedEmbedder(embedder, { instruments });
}

/**
 * Vectors from different models (or dimensions) are not comparable: recall would return
 * noise. An empty store records the current model; a store made with another refuses to start.
 */
async function checkEmbeddingInfo(storage: Storage, embedder: Embedder, logger: Logger): Promise<void> {
  const stored = await storage.meta.getEmbeddingInfo();
  if (stored === null) {
    // Record only a model that really answered, so a guessed dimension never gets written.
    try {
      await embedder.embed(['embedding model probe']);
    } catch (err) {
      logger.warn({ err }, 'embedding model unavailable at startup; its info is recorded on a later start');
      return;
    }
    await storage.meta.setEmbeddingInfo({ ...embedder.info });
    return;
  }
  const current = embedder.info;
  if (!sameEmbeddingModel(stored, current)) {
    throw new Error(
      `embedding model mismatch: the store holds ${describe(stored)} vectors, the embedder is ${describe(current)}; ` +
        'either configure the model the store was written with (SERVICE_LOCAL_EMBEDDINGS=1 keeps local embeddings ' +
        'when a provider key is set; SERVICE_LOCAL_EMBEDDING_MODEL or SERVICE_EMBEDDING_MODEL_PATH pick the local model) ' +
        'or run `service reindex` to re-embed the stored patterns with the current model',
    );
  }
}

function describe(info: EmbeddingInfo): string {
  return `${info.model} (${info.dimension} dimensions)`;
}

/**
 * The embedder and the reuse-tier thresholds in force, without storage or jobs: for local
 * tools that only embed (`service calibrate`), so they never take the data path's lock.
 */
export async function openEmbedding(config: Config, logger: Logger): Promise<{ embedder: Embedder; reuseTiers: ReuseTierSettings; close(): Promise<void> }> {
  const embedder = await createEmbedder(config, { logger, instruments: new PrometheusMetrics() });
  try {
    const reuseTiers = await tiersFor(config, embedder);
    return { embedder, reuseTiers, close: () => embedder.close() };
  } catch (err) {
    await embedder.close().catch(() => undefined);
    throw err;
  }
}

/** The bundled model's folder when it is the configured one (its config.json holds its tiers). */
function bundledFolderFor(localModel: string): string | null {
  return localModel === BUNDLED_MODEL_ID ? bundledModelPath() : null;
}

/** Thresholds for the configured model: env → its folder's config.json → built-in → spec. */
function tiersFor(config: Config, embedder: Embedder): Promise<ReuseTierSettings> {
  return resolveReuseTiers({
    env: config.recall.tiers,
    modelFolder: config.embedding.local ? (config.embedding.localModelPath ?? bundledFolderFor(config.embedding.localModel)) : null,
    modelId: embedder.info.model,
  });
}

// ---- Local maintenance tools (commands reach adapters only through these) ----

/** A logger for a local command (its level may differ from the server's). */
export function createCommandLogger(options: { level: string; json: boolean }): Logger {
  return createLogger(options);
}

/** Stores calibrated thresholds as reuse_tiers in a model folder's config.json; returns the file written. */
export function saveModelReuseTiers(folder: string, tiers: TierThresholds): Promise<string> {
  return writeModelReuseTiers(folder, tiers);
}

/** The schema migration runner, loaded on use so other commands never load the PostgreSQL driver. */
export async function schemaMigrations(): Promise<typeof import('./adapters/migrations/index.js') & {
  openMaintenancePool: typeof import('./adapters/storage/postgres/maintenance-pool.js').openMaintenancePool;
}> {
  const [migrations, { openMaintenancePool }] = await Promise.all([
    import('./adapters/migrations/index.js'), import('./adapters/storage/postgres/maintenance-pool.js'),
  ]);
  return { ...migrations, openMaintenancePool };
}

export interface DataMigrationHooks {
  /** Called once when the source store has no vectors and every task is re-embedded. */
  onReembed(): void;
  onProgress(done: number, total: number): void;
}

/**
 * `migrate-data`: copies the JSON store at dataPath into the configured PostgreSQL database,
 * both opened by openStorage (the target on a pool of its own, as a one-shot command that
 * fails when PostgreSQL does not answer). The database is checked first, so "needs
 * SERVICE_DATABASE_URL" / "cannot connect" come before the JSON store's lock is taken. The
 * configured embedder is loaded only if the source cannot hand out its vectors.
 */
export async function copyJsonToPostgres(config: Config, dataPath: string, hooks: DataMigrationHooks): Promise<CopyReport> {
  const { openMaintenancePool } = await schemaMigrations();
  await (await openMaintenancePool(config, 'migrate-data')).end();
  const opened: { close(): Promise<void> }[] = [];
  let embedder: Embedder | null = null;
  try {
    const source = (await openStorage({ ...config, storage: { ...config.storage, kind: 'json', dataPath } }, { whenUnreachable: 'fail' })).value;
    opened.push(source);
    const target = (await openStorage({ ...config, storage: { ...config.storage, kind: 'postgres' } }, { whenUnreachable: 'fail' })).value;
    opened.push(target);
    return await copyStorage(source, target, {
      embedder: async () => {
        hooks.onReembed();
        embedder = await createEmbedder(config, { logger: silentLogger, instruments: noopInstruments });
        return embedder;
      },
      onProgress: hooks.onProgress,
    });
  } finally {
    for (const s of opened.reverse()) await s.close().catch(() => undefined);
    await (embedder as Embedder | null)?.close?.().catch(() => undefined);
  }
}
