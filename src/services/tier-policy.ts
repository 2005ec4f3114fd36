import { centeredCosine, centeringApplies } from '../core/hybrid.js';
import { fitAdaptThreshold, fixedPolicy, MIN_FIT_PATTERNS, type TierPolicyInForce } from '../core/tier-policy.js';
import type { Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';
import { recallBudget } from './recall-dedup.js';
import { tiersInForce } from './tiers.js';

/**
 * The tier policy in force per project (docs/behavior.md "Reuse tiers"). Under `calibrated`
 * the adapt threshold is fitted on the project itself: for up to FIT_SAMPLE patterns spread
 * over the project, the best centred cosine against the other patterns (among its
 * FIT_NEIGHBOURS nearest by raw cosine), then the 90th percentile of those bests. The fit is
 * kept in memory per storage and project and refitted, in the background, once the project's
 * size has moved by REFIT_SHARE since the last fit (learn, import and delete all move it).
 * The first fit of a project is awaited; every later recall uses the fit it finds.
 */
const FIT_SAMPLE = 100;
const FIT_NEIGHBOURS = 10;
const REFIT_SHARE = 0.1;
const REFIT_MIN = 5;

interface Fit {
  threshold: number | null;
  /** Project size when fitted. */
  docs: number;
  sampled: number;
  fittedAt: string;
}

interface FitSlot {
  fit: Fit | null;
  running: Promise<Fit> | null;
}

const fits = new WeakMap<object, Map<string, FitSlot>>();

function slotFor(deps: ServiceDeps, scope: Scope): FitSlot {
  let perStorage = fits.get(deps.storage);
  if (!perStorage) fits.set(deps.storage, (perStorage = new Map()));
  const key = JSON.stringify([scope.tenant_id, scope.project_id]);
  let slot = perStorage.get(key);
  if (!slot) perStorage.set(key, (slot = { fit: null, running: null }));
  return slot;
}

/** Fits the project's adapt threshold now (bounded: FIT_SAMPLE searches of FIT_NEIGHBOURS). */
export async function fitProject(deps: ServiceDeps, scope: Scope, docs: number): Promise<Fit> {
  const sample = await deps.storage.patterns.sampleVectors(scope, FIT_SAMPLE);
  const bests: number[] = [];
  const budget = recallBudget();
  for (const { id, vector } of sample) {
    // Each search scans the whole project (thousands of rows): the loop is handed back between them.
    await budget.handBack();
    const set = await deps.storage.patterns.hybridCandidates(scope, {
      vector, terms: [], vectorK: FIT_NEIGHBOURS + 1, keywordK: 0, evalWindow: 0,
    });
    const centre = centeringApplies(set.stats);
    let best = -Infinity;
    for (const c of set.candidates) {
      if (c.id === id) continue;
      const score = centre && c.mean_dot !== null ? centeredCosine(c.cosine, set.stats.query_mean_dot!, c.mean_dot, set.stats.mean_norm2!) : c.cosine;
      if (score > best) best = score;
    }
    if (best > -Infinity) bests.push(best);
  }
  return { threshold: fitAdaptThreshold(bests), docs, sampled: bests.length, fittedAt: deps.clock.now().toISOString() };
}

function startFit(deps: ServiceDeps, scope: Scope, slot: FitSlot, docs: number): Promise<Fit> {
  if (slot.running) return slot.running;
  const running = fitProject(deps, scope, docs)
    .then((fit) => {
      slot.fit = fit;
      return fit;
    })
    .finally(() => {
      slot.running = null;
    });
  slot.running = running;
  return running;
}

function stale(fit: Fit, docs: number): boolean {
  return refitDue(fit.docs, docs);
}

/** Whether a fit made at `fittedDocs` patterns is due again at `docs` (the schedule every per-project fit follows). */
export function refitDue(fittedDocs: number, docs: number): boolean {
  return Math.abs(docs - fittedDocs) >= Math.max(REFIT_MIN, REFIT_SHARE * fittedDocs);
}

/**
 * The policy in force for the project, given its current size (`docs`, from the recall's own
 * candidate query). `fresh: true` (health, calibrate) waits for a refit when the fit is stale.
 */
export async function tierPolicyFor(deps: ServiceDeps, scope: Scope, docs: number, opts: { fresh?: boolean } = {}): Promise<TierPolicyInForce> {
  const settings = tiersInForce(deps);
  if (settings.policy !== 'calibrated') return fixedPolicy(settings, settings.source.adapt);
  const fallback: TierPolicyInForce = { policy: 'calibrated', duplicate_threshold: null, adapt_threshold: settings.adapt, source: 'small_project_fallback' };
  if (docs < MIN_FIT_PATTERNS) return fallback;
  const slot = slotFor(deps, scope);
  let fit = slot.fit;
  if (!fit || (opts.fresh && stale(fit, docs))) {
    fit = await startFit(deps, scope, slot, docs);
  } else if (stale(fit, docs)) {
    // A refit in the background; this recall uses the fit it has.
    startFit(deps, scope, slot, docs).catch((err: unknown) => deps.logger.warn({ err }, 'tier policy: refitting the adapt threshold failed'));
  }
  if (fit.threshold === null) return fallback;
  return { policy: 'calibrated', duplicate_threshold: null, adapt_threshold: fit.threshold, source: 'project_fit' };
}

/** For health: the policy and how the fit was made. */
export async function tierPolicyReport(deps: ServiceDeps, scope: Scope): Promise<TierPolicyInForce & { patterns: number; sampled: number | null; fitted_at: string | null }> {
  const count = await deps.storage.patterns.count(scope);
  const policy = await tierPolicyFor(deps, scope, count, { fresh: true });
  const fit = slotFor(deps, scope).fit;
  return { ...policy, patterns: count, sampled: policy.source === 'project_fit' ? fit?.sampled ?? null : null, fitted_at: policy.source === 'project_fit' ? fit?.fittedAt ?? null : null };
}

