import { SPEC_TIERS } from '../core/similarity.js';
import type { ReuseTierSettings } from '../core/types.js';
import type { ServiceDeps } from './deps.js';

/**
 * The reuse-tier thresholds in force: what the composition root resolved for the model, or,
 * for deps built by hand (tests, tools), the environment's values over the spec's.
 */
export function tiersInForce(deps: Pick<ServiceDeps, 'config' | 'reuseTiers'>): ReuseTierSettings {
  if (deps.reuseTiers) return deps.reuseTiers;
  const { duplicate, adapt } = deps.config.recall.tiers;
  return {
    duplicate: duplicate ?? SPEC_TIERS.duplicate,
    adapt: adapt ?? SPEC_TIERS.adapt,
    source: { duplicate: duplicate === null ? 'spec_default' : 'env', adapt: adapt === null ? 'spec_default' : 'env' },
    model: 'unknown',
  };
}
