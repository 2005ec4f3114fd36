import { effectiveAuthMode, type Config } from './config.js';
import type { EmbeddingInfo } from './core/types.js';
import { CachedEmbedder, createEmbedder } from './adapters/embeddings/index.js';
import { createLlm } from './adapters/llm/index.js';
import { createLogger } from './adapters/logging/logger.js';
import { PrometheusMetrics } from './adapters/metrics/prometheus.js';
import { systemClock } from './ports/clock.js';
import type { Embedder } from './ports/embedder.js';
import type { KeyStore } from './ports/keys.js';
import type { Logger } from './ports/observability.js';
import type { Storage } from './ports/storage.js';
import type { ServiceDeps } from './services/deps.js';
import { JobRunner } from './services/job-runner.js';
import { Billing } from './services/billing.js';

const DUNNING_SWEEP_MS = 3_600_000;

/** The composed application: everything the server, jobs and local commands need. */
export interface App {
  deps: ServiceDeps;
  /** Counters, histograms and gauges behind /metrics (also deps.instruments). */
  metrics: PrometheusMetrics;
  /** When createApp finished (deep health's uptime). */
  startedAt: Date;
  /** DB auth mode: API keys and tenants in PostgreSQL; null in the other auth modes. */
  keyStore: KeyStore | null;
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
 */
export async function createApp(config: Config, overrides: Partial<ServiceDeps> = {}, options: CreateAppOptions = {}): Promise<App> {
  const logger: Logger = overrides.logger ?? createLogger({ level: config.logLevel, json: config.jsonLogs });
  const metrics = new PrometheusMetrics();
  const instruments = overrides.instruments ?? metrics;
  const clock = overrides.clock ?? systemClock;

  let storage = overrides.storage ?? (await createStorage(config, { logger, instruments }));
  let keyStore: KeyStore | null = null;
  let embedder: Embedder | undefined;
  try {
    if (effectiveAuthMode(config) === 'db') {
      keyStore = await openKeyStore(config, { logger, instruments });
      // DB mode keeps its audit log in PostgreSQL even when patterns live in JSON files.
      if (storage.kind !== 'postgres') storage = { ...storage, audit: keyStore.audit };
    }
    embedder = overrides.embedder
      ? wrapInCache(overrides.embedder, instruments)
      : await createEmbedder(config, { logger, instruments });
    if (!options.allowEmbeddingMismatch) await checkEmbeddingInfo(storage, embedder, logger);
  } catch (err) {
    await embedder?.close?.().catch(() => undefined);
    await keyStore?.close().catch(() => undefined);
    await storage.close().catch(() => undefined);
    throw err;
  }
  const llm = 'llm' in overrides ? (overrides.llm ?? null) : createLlm(config, { logger, instruments });

  const billing = overrides.billing ?? (await composeBilling(config, storage, clock, logger));
  const deps: ServiceDeps = { config, storage, embedder, llm, clock, logger, instruments, keyStore, billing };
  const jobRunner = new JobRunner(deps, {
    pollIntervalMs: config.jobs.pollIntervalSeconds * 1000,
    maxConcurrent: config.jobs.maxConcurrent,
    staleAfterMs: config.jobs.staleSeconds * 1000,
  });
  if (options.runJobs !== false) jobRunner.start();
  // Dunning warnings must appear even for a tenant that sends no requests.
  const dunningSweep = billing?.enabled && options.runJobs !== false
    ? setInterval(() => void billing.sweepDunning().catch((err: unknown) => logger.warn({ err }, 'dunning sweep failed')), DUNNING_SWEEP_MS).unref()
    : null;
  let closing: Promise<void> | null = null;
  return {
    deps,
    metrics,
    startedAt: clock.now(),
    keyStore,
    jobRunner,
    close() {
      closing ??= (async () => {
        if (dunningSweep) clearInterval(dunningSweep);
        // Jobs first: they still use the embedder and storage while they finish.
        await jobRunner.stop();
        await embedder.close?.().catch((err: unknown) => logger.warn({ err }, 'embedder close failed'));
        await keyStore?.close().catch((err: unknown) => logger.warn({ err }, 'key store close failed'));
        await storage.close();
      })();
      return closing;
    },
  };
}

async function createStorage(config: Config, opts: { logger: Logger; instruments: ServiceDeps['instruments'] }): Promise<Storage> {
  if (config.storage === 'postgres') {
    // Loaded only when chosen, so the embedded default never pays for (or breaks on) pg.
    const { createPostgresStorage } = await import('./adapters/storage/postgres/index.js');
    return createPostgresStorage(config, opts);
  }
  const { createJsonStorage } = await import('./adapters/storage/json/index.js');
  return createJsonStorage({ dataPath: config.dataPath, instruments: opts.instruments });
}

async function openKeyStore(config: Config, opts: { logger: Logger; instruments: ServiceDeps['instruments'] }): Promise<KeyStore> {
  // Loaded only in DB auth mode, like the PostgreSQL storage.
  const { createPostgresKeyStore } = await import('./adapters/storage/postgres/keys.js');
  return createPostgresKeyStore(config, opts);
}

/** Billing counts usage on every storage; it enforces plans only with PAYMENT_SECRET_KEY (Stripe). */
async function composeBilling(config: Config, storage: Storage, clock: ServiceDeps['clock'], logger: Logger): Promise<Billing | undefined> {
  if (!storage.billing) return undefined;
  const { secretKey, webhookSecret, apiBaseUrl } = config.payment;
  // Loaded only when billing is on: self-hosted servers never load the payment SDK.
  const payments = secretKey ? (await import('./adapters/payments/stripe.js')).createStripeProcessor({ secretKey, webhookSecret, apiBaseUrl }) : null;
  return new Billing({ config, clock, logger, repo: storage.billing, payments });
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
  if (stored.model !== current.model || stored.dimension !== current.dimension) {
    throw new Error(
      `embedding model mismatch: the store holds ${describe(stored)} vectors, the embedder is ${describe(current)}; ` +
        'run `service reindex` to re-embed the stored patterns with the current model',
    );
  }
}

function describe(info: EmbeddingInfo): string {
  return `${info.model} (${info.dimension} dimensions)`;
}
