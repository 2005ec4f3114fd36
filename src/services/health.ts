import type { DeepHealthResponse, HealthResponse, ReadinessResponse } from '../contracts/health.js';
import type { Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';
import { tierPolicyReport } from './tier-policy.js';
import { tiersInForce } from './tiers.js';

type CheckStatus = 'ok' | 'error' | 'not_configured';

/**
 * One probe's answer: what we send inside the contract's open (passthrough) check object. A
 * type alias, since only those fit an index signature.
 */
type Check = {
  status: CheckStatus;
  latency_ms: number | null;
  /** (+) Storage check of a store with migrations: the revision its schema is at. */
  schema_revision?: string | null;
};

/** A failed embedder is probed again at most this often by basic health (it may recover). */
const EMBEDDER_REPROBE_MS = 30_000;
const embedderProbes = new WeakMap<object, number>();

/**
 * Basic health: `degraded` when the embedding model cannot load or answer. What the last
 * real call saw decides; before any call (or a while after a failure) one probe embedding
 * finds out, so a model that never loads shows up on the first probe, not the first learn.
 */
export async function basicHealth(deps: ServiceDeps, scope: Scope): Promise<HealthResponse> {
  const [embedding, pattern_count] = await Promise.all([embedderReady(deps), deps.storage.patterns.count(scope)]);
  return { status: embedding ? 'ok' : 'degraded', storage: deps.storage.kind, pattern_count };
}

async function embedderReady(deps: ServiceDeps): Promise<boolean> {
  const { embedder } = deps;
  const state = embedder.readiness?.() ?? 'ok';
  if (state === 'ok') return true;
  const now = deps.clock.now().getTime();
  const last = embedderProbes.get(embedder);
  if (state === 'error' && last !== undefined && now - last < EMBEDDER_REPROBE_MS) return false;
  embedderProbes.set(embedder, now);
  const check = await probe(deps, 'embedding', embeddingProbe(deps, deps.clock.now()));
  return check.status === 'ok';
}

/** Embeds a text never seen before, so the cache in front of the model cannot answer for it. */
function embeddingProbe(deps: ServiceDeps, now: Date): () => Promise<void> {
  return async () => {
    await deps.embedder.embed([`health probe ${now.toISOString()} ${Math.random()}`]);
  };
}

/** A provider probe costs money and quota; one answer serves every deep probe for a minute. */
const LLM_PROBE_TTL_MS = 60_000;
const llmProbeCache = new WeakMap<object, { at: number; check: Check }>();

/**
 * Deep health (docs/behavior.md "Health and maintenance"): a real storage query, a real embedding of a short text, and a
 * cheap authenticated LLM call. Storage down → error (HTTP 503); embedder or LLM down →
 * degraded; no LLM configured is not a fault.
 */
export async function deepHealth(deps: ServiceDeps, meta: { version: string; startedAt: Date }, scope?: Scope): Promise<DeepHealthResponse> {
  const now = deps.clock.now();
  const [storage, embedding, llm] = await Promise.all([
    probe(deps, 'storage', storageProbe(deps)),
    probe(deps, 'embedding', embeddingProbe(deps, now)),
    llmCheck(deps, now),
  ]);
  const status = storage.status === 'error' ? 'error' : embedding.status === 'error' || llm.status === 'error' ? 'degraded' : 'ok';
  const tierPolicy = scope && storage.status !== 'error' ? await projectTierPolicy(deps, scope) : undefined;
  return {
    status,
    version: meta.version,
    uptime_seconds: Math.max(0, (now.getTime() - meta.startedAt.getTime()) / 1000),
    checks: { storage, llm, embedding },
    reuse_tiers: tiersInForce(deps),
    ...(tierPolicy ? { tier_policy: tierPolicy } : {}),
  };
}

/**
 * (+) Readiness for probes (docs/behavior.md "Health and maintenance"): storage answers a real
 * query. Only ready or not: the cause goes to the log, never to the unauthenticated caller.
 */
export async function readiness(deps: ServiceDeps): Promise<ReadinessResponse> {
  const storage = await probe(deps, 'storage', () => deps.storage.ping());
  return { status: storage.status === 'ok' ? 'ready' : 'not_ready' };
}

/** The caller's project's tier policy; a failure to fit is logged and leaves it out (health still answers). */
async function projectTierPolicy(deps: ServiceDeps, scope: Scope): Promise<DeepHealthResponse['tier_policy']> {
  try {
    return await tierPolicyReport(deps, scope);
  } catch (err) {
    deps.logger.warn({ err }, 'deep health: the tier policy of the project could not be worked out');
    return undefined;
  }
}

async function llmCheck(deps: ServiceDeps, now: Date): Promise<Check> {
  const { llm } = deps;
  if (!llm) return { status: 'not_configured', latency_ms: null };
  const cached = llmProbeCache.get(llm);
  if (cached && now.getTime() - cached.at < LLM_PROBE_TTL_MS) return cached.check;
  const check = await probe(deps, 'llm', () => llm.ping());
  llmProbeCache.set(llm, { at: now.getTime(), check });
  return check;
}

/** The storage's real query: its schema revision where it has migrations, else a ping. */
function storageProbe(deps: ServiceDeps): () => Promise<Partial<Check> | void> {
  const { storage } = deps;
  if (!storage.schemaRevision) return () => storage.ping();
  return async () => ({ schema_revision: await storage.schemaRevision!() });
}

async function probe(deps: ServiceDeps, name: string, run: () => Promise<Partial<Check> | void>): Promise<Check> {
  const started = performance.now();
  try {
    const extra = await run();
    return { ...extra, status: 'ok', latency_ms: round(performance.now() - started) };
  } catch (err) {
    // The cause goes to the log only: a health body must not leak hosts or connection strings.
    deps.logger.warn({ err, check: name }, 'deep health check failed');
    return { status: 'error', latency_ms: round(performance.now() - started) };
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
