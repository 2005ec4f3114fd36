import { MIN_CENTERING_PATTERNS } from '../core/hybrid.js';
import { principalComponents, type ComponentRemoval } from '../core/components.js';
import type { Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';
import { refitDue } from './tier-policy.js';

/**
 * The project's principal directions that hybrid recall removes from its vector side
 * (core/components.ts, docs/behavior.md "Recall" 2): fitted on the same spread sample of the
 * project's vectors the tier fit reads (storage sampleVectors, identical on every storage),
 * kept in memory per storage and project, and refitted in the background on the tier fit's
 * schedule (tier-policy.ts refitDue). A project's first hybrid recall waits for its first fit,
 * so the same recall ranks the same way whatever ran before it.
 */
const SAMPLE = 200;

interface Slot {
  fit: { directions: Float32Array[]; docs: number } | null;
  running: Promise<void> | null;
}

const slots = new WeakMap<object, Map<string, Slot>>();

function slotFor(deps: ServiceDeps, scope: Scope): Slot {
  let perStorage = slots.get(deps.storage);
  if (!perStorage) slots.set(deps.storage, (perStorage = new Map()));
  const key = JSON.stringify([scope.tenant_id, scope.project_id]);
  let slot = perStorage.get(key);
  if (!slot) perStorage.set(key, (slot = { fit: null, running: null }));
  return slot;
}

function removalOf(deps: ServiceDeps, slot: Slot): ComponentRemoval | null {
  const directions = slot.fit?.directions ?? [];
  return directions.length === 0 ? null : { directions, vectorWeight: deps.config.recall.ranking.removedVectorWeight };
}

/** The removal in force now (null: none fitted yet, or switched off). */
export function currentRemoval(deps: ServiceDeps, scope: Scope): ComponentRemoval | null {
  if (deps.config.recall.ranking.removedComponents === 0) return null;
  return removalOf(deps, slotFor(deps, scope));
}

/**
 * The removal for a project of `docs` patterns: the first fit is awaited; a stale one is
 * refitted in the background while this recall uses the one it has. Null below the size
 * centring needs (the mean, and so its residual directions, would be the few patterns themselves).
 */
export async function removalFor(deps: ServiceDeps, scope: Scope, docs: number): Promise<ComponentRemoval | null> {
  const count = deps.config.recall.ranking.removedComponents;
  if (count === 0 || docs < MIN_CENTERING_PATTERNS) return null;
  const slot = slotFor(deps, scope);
  if (!slot.fit) await startFit(deps, scope, slot, docs, count);
  else if (refitDue(slot.fit.docs, docs)) {
    startFit(deps, scope, slot, docs, count).catch((err: unknown) => deps.logger.warn({ err }, 'recall: refitting the principal directions failed'));
  }
  return removalOf(deps, slot);
}

function startFit(deps: ServiceDeps, scope: Scope, slot: Slot, docs: number, count: number): Promise<void> {
  if (slot.running) return slot.running;
  const running = deps.storage.patterns.sampleVectors(scope, SAMPLE)
    .then((sample) => {
      slot.fit = { directions: principalComponents(sample.map((s) => s.vector), count), docs };
    })
    .finally(() => {
      slot.running = null;
    });
  slot.running = running;
  return running;
}
