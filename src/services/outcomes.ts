import { NotFoundError, ValidationError } from '../core/errors.js';
import { outcomeCredit } from '../core/outcome-credit.js';
import type { OutcomeReport, RecallTrace } from '../core/outcome-types.js';
import { redact } from '../core/redaction.js';
import { DAY_MS } from '../core/retention.js';
import type { Role, Scope } from '../core/types.js';
import type { OutcomeRequest, OutcomeResponse, PatternOutcomesResponse } from '../contracts/memory.js';
import type { ServiceDeps } from './deps.js';
import { mintedAt } from './ids.js';
import { lookupsRecorded } from './lookup-events.js';
import { browsablePattern } from './patterns.js';

/**
 * Outcomes (docs/behavior.md "Outcomes"): how reusing one match of one recall went, reported
 * against the recall's id. The recall's trace must still be kept (404 otherwise), and the key
 * must be one of its matches (422 otherwise); the same recall and key again replaces the report.
 */
export async function reportOutcome(deps: ServiceDeps, scope: Scope, input: OutcomeRequest): Promise<OutcomeResponse> {
  const trace = await liveTrace(deps, scope, input.recall_id);
  if (!trace.pattern_keys.includes(input.pattern_key)) {
    throw new ValidationError('pattern_key is not one of that recall\'s matches', [
      { path: 'pattern_key', message: `recall ${input.recall_id} returned ${trace.pattern_keys.length} matches, not this one` },
    ]);
  }
  // A lesson is shown to every agent that recalls the pattern: the same redaction as learned text.
  const detail = input.detail === undefined ? null : deps.config.redaction ? redact(input.detail).text : input.detail;
  const report: OutcomeReport = {
    recall_id: input.recall_id,
    pattern_key: input.pattern_key,
    passed: input.passed,
    score: input.score ?? null,
    detail,
    source: input.source ?? null,
    at: deps.clock.now().toISOString(),
  };
  const credit = outcomeCredit(deps.config.outcomes.reuseCredit, input.passed);
  const result = await deps.storage.outcomes.report(scope, report, { credit });
  if (result === 'unknown_recall') throw new NotFoundError(`recall ${input.recall_id} not found (unknown, or past the outcome retention)`);
  if (result === 'not_a_match') {
    throw new ValidationError('pattern_key is not one of that recall\'s matches', [
      { path: 'pattern_key', message: 'the pattern is no longer stored' },
    ]);
  }
  return { ...report, replaced: result === 'replaced' };
}

/** (+) GET /v1/patterns/{key}/outcomes: the pattern's outcomes, newest first, with their queries. */
export async function listPatternOutcomes(
  deps: ServiceDeps,
  scope: Scope,
  role: Role,
  key: string,
  limit: number,
): Promise<PatternOutcomesResponse> {
  const { id } = await browsablePattern(deps, scope, role, key);
  const list = await deps.storage.outcomes.listForPattern(scope, id, { limit });
  return {
    pattern_key: key,
    outcomes: list.map((o) => ({
      recall_id: o.recall_id, query: o.query, passed: o.passed, score: o.score, detail: o.detail, source: o.source, at: o.at,
    })),
  };
}

/** The oldest time a kept trace may have (SERVICE_OUTCOME_RETENTION_DAYS before now). */
export function outcomeCutoff(deps: ServiceDeps): string {
  return new Date(deps.clock.now().getTime() - deps.config.outcomes.retentionDays * DAY_MS).toISOString();
}

/** Deletes the scope's traces and outcomes past the outcome retention (the retention run does this too). */
export function purgeExpiredOutcomes(deps: ServiceDeps, scope: Scope): Promise<{ traces: number; outcomes: number }> {
  return deps.storage.outcomes.purgeBefore(scope, outcomeCutoff(deps));
}

/**
 * An outcome for a recall minted less than RECENT_RECALL_MS ago whose trace is not found waits
 * up to TRACE_GRACE_MS for another process's batch to write it (a batch normally lands within
 * milliseconds; a retried one within seconds).
 */
const RECENT_RECALL_MS = 10_000;
const TRACE_GRACE_MS = 1_000;
const TRACE_POLL_MS = 50;

/**
 * The recall's trace, waiting first for this process's recall bookkeeping still in flight (an
 * outcome may arrive before its recall's record is written); 404 when unknown or past retention.
 */
async function liveTrace(deps: ServiceDeps, scope: Scope, recallId: string): Promise<RecallTrace> {
  let trace = await deps.storage.outcomes.getTrace(scope, recallId);
  if (!trace) {
    await Promise.all([deps.storage.settleRecallWrites(), lookupsRecorded(deps)]);
    trace = await deps.storage.outcomes.getTrace(scope, recallId);
  }
  // A recall answered by another process a moment ago may still sit in that process's queue
  // (docs/behavior.md "Recall bookkeeping"): give its batch a bounded moment to land.
  const age = deps.clock.now().getTime() - mintedAt(recallId);
  const recent = age > -RECENT_RECALL_MS && age < RECENT_RECALL_MS;
  for (let polls = 0; !trace && recent && polls < TRACE_GRACE_MS / TRACE_POLL_MS; polls++) {
    await new Promise((resolve) => setTimeout(resolve, TRACE_POLL_MS));
    trace = await deps.storage.outcomes.getTrace(scope, recallId);
  }
  if (!trace || Date.parse(trace.at) < Date.parse(outcomeCutoff(deps))) {
    throw new NotFoundError(`recall ${recallId} not found (unknown, or past the outcome retention)`);
  }
  return trace;
}
