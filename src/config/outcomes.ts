import { REUSE_CREDIT_MODES, type ReuseCreditMode } from '../core/outcome-credit.js';
import { num, oneOf, type Env } from './env-readers.js';

/** (+) Recall traces and reported outcomes (docs/behavior.md "Outcomes"). */
export interface OutcomeSettings {
  /** SERVICE_OUTCOME_RETENTION_DAYS: traces and outcomes older than this are purged. */
  retentionDays: number;
  /**
   * SERVICE_REUSE_CREDIT: `on-recall` (the spec's +0.1 per reusable recall hit) or `on-outcome`
   * (+0.1 per reported success, −0.1 per reported failure, nothing for the hit itself).
   */
  reuseCredit: ReuseCreditMode;
}

export function outcomeSettings(env: Env): OutcomeSettings {
  return {
    retentionDays: num(env, 'SERVICE_OUTCOME_RETENTION_DAYS', 30, { min: 1, max: 36_500, int: true }),
    reuseCredit: oneOf(env, 'SERVICE_REUSE_CREDIT', REUSE_CREDIT_MODES, 'on-recall'),
  };
}
