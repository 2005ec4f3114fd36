import type { Config } from '../config/index.js';
import type { QueryDots } from '../core/outcome-ranking.js';
import type { ReuseTierSettings } from '../core/types.js';
import type { Clock } from '../ports/clock.js';
import type { Embedder } from '../ports/embedder.js';
import type { KeyStore } from '../ports/keys.js';
import type { Llm } from '../ports/llm.js';
import type { Instruments, Logger } from '../ports/observability.js';
import type { Storage } from '../ports/storage.js';
import type { Tracer } from '../ports/tracing.js';
import type { Billing } from './billing.js';

/**
 * Everything a use case may touch. Built once by src/app.ts; tests build their own.
 * Service functions take (deps, scope, input) and never read argv, env or HTTP objects.
 */
export interface ServiceDeps {
  config: Config;
  storage: Storage;
  embedder: Embedder;
  /** null when SERVICE_LLM_PROVIDER=none or the provider key is missing (→ 501). */
  llm: Llm | null;
  clock: Clock;
  logger: Logger;
  instruments: Instruments;
  /**
   * DB auth mode's API keys and tenants; null in the other modes. The one way to reach the key
   * store: the DB-key authenticator, the key routes and governance deletions
   * (keyStore.keys.revokeAll) all read it here.
   */
  keyStore: KeyStore | null;
  /** (+) Tracing (SERVICE_TELEMETRY); absent means no spans. */
  tracer?: Tracer;
  /**
   * (+) Reuse-tier thresholds in force for the configured embedder (resolved by src/app.ts);
   * absent in hand-built deps, where SERVICE_TIER_* or the spec's values apply (see tiers.ts).
   */
  reuseTiers?: ReuseTierSettings;
  /**
   * (+) Outcome ranking's query comparisons on a SIMD kernel (the int8 kernel's createQueryDots, set by
   * src/app.ts); absent: the same figures from plain JavaScript, slower.
   */
  queryDots?: QueryDots;
  /** (+) Plans, quotas and dunning (services/billing.ts); absent only where a test builds deps by hand. */
  billing?: Billing;
}
