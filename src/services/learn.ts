import { resetDate } from '../core/billing.js';
import { DomainError, QuotaExceededError, EmbeddingUnavailableError } from '../core/errors.js';
import { landOnExisting, newPattern, type LearnRun } from '../core/learn.js';
import { redactFields } from '../core/redaction.js';
import { isNearIdentical, taskWords } from '../core/near-identical.js';
import { isMeaningfulVector, storableVector } from '../core/vector.js';
import type { LearnInput, LearnResponse } from '../contracts/memory.js';
import { patternKey, type PatternRecord, type Scope } from '../core/types.js';
import { auditRedaction, type RequestContext } from './audit.js';
import type { LearnPatternWrite, TenantPatternQuota } from '../ports/storage.js';
import type { ServiceDeps } from './deps.js';
import { newId } from './ids.js';
import { checkSameJob } from './verify-duplicate.js';
import { assertCanVerify } from './verify-reuse.js';
import { scopeLocks } from './scope-lock.js';

/** docs/behavior.md "Learn" 5: the nearest few by meaning are checked for near-identical wording. */
const NEAR_IDENTICAL_CANDIDATES = 5;

export async function learn(deps: ServiceDeps, scope: Scope, input: LearnInput, ctx: RequestContext): Promise<LearnResponse> {
  const { storage, clock } = deps;
  const started = clock.now();
  if (input.verify_duplicates) assertCanVerify(deps, 'verify_duplicates');

  const { task, code, output, run_id, author, redacted } = await redactInput(deps, scope, input, ctx);
  const vector = await embedTask(deps, task);
  const now = clock.now().toISOString();

  // Quota, near-identical check (with its LLM check when asked) and the writes are one
  // decision per scope; the writes themselves are one atomic step (Storage.recordLearn).
  const duplicate: { checked: Awaited<ReturnType<typeof checkSameJob>> | null } = { checked: null };
  const { stored, patternId } = await scopeLocks(storage).run(scope, async () => {
    const tenantQuota = await enforcePatternQuota(deps, scope, ctx, started);
    let existing = await findNearIdentical(deps, scope, vector, task);
    duplicate.checked = existing && input.verify_duplicates ? await checkSameJob(deps, { task, code }, existing) : null;
    // Similar words, different job: keep the run as a pattern of its own.
    if (duplicate.checked?.check?.verdict === 'different') existing = null;
    const run: LearnRun = {
      task, code, output, run_id, author, redacted, now,
      eval_score: input.eval_score, classification: input.classification, source: input.source, expires_at: input.expires_at ?? null,
    };
    const pattern: LearnPatternWrite = existing
      ? landOnExisting(existing, run)
      : { op: 'insert', pattern: newPattern(newId(clock.now()), run), vector };
    const stored = pattern.op !== 'keep';
    // The run's score is an eval observation of the pattern it landed on (docs/behavior.md
    // "Learn" 5); the run is counted and leaves its ROI event, in the same step.
    // The tenant's quota goes with the writes: learns in the tenant's other projects hold
    // other scope locks, so only the storage can check it atomically with the insert.
    await storage.recordLearn(scope, {
      pattern,
      eval_score: input.eval_score,
      at: now,
      tenant_quota: tenantQuota,
      event: { at: now, kind: 'learn', stored, eval_score: input.eval_score, latency_ms: clock.now().getTime() - started.getTime() },
    });
    return { stored, patternId: pattern.op === 'keep' ? pattern.id : pattern.pattern.id };
  });

  const result: LearnResponse = { stored, pattern_count: await storage.patterns.count(scope), pattern_key: patternKey(patternId) };
  if (redacted) result.redacted = true;
  const { checked } = duplicate;
  if (checked) result.duplicate_check = checked.check;
  if (checked?.warning) result.warnings = [checked.warning];
  return result;
}

/** The embedder's own failures (network, model load) are an outage of a dependency: 503, not 500. */
async function embedTask(deps: ServiceDeps, task: string): Promise<Float32Array> {
  try {
    const [vector] = await deps.embedder.embed([task]);
    // A task the model reduces to nothing is stored with a zero vector (core/vector.ts).
    return storableVector(vector);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw new EmbeddingUnavailableError('the embedding model is unavailable; try again later', { cause: err });
  }
}

async function redactInput(
  deps: ServiceDeps,
  scope: Scope,
  input: LearnInput,
  ctx: RequestContext,
): Promise<{ task: string; code: string; output: string | null; run_id: string | null; author: string | null; redacted: boolean }> {
  const given = { task: input.task, code: input.code, output: input.output ?? null, run_id: input.run_id ?? null, author: input.author ?? null };
  if (!deps.config.redaction) return { ...given, redacted: false };
  // Every free-text field a caller sends is redacted, run_id and author too.
  const { fields, counts, redacted } = redactFields(given);
  if (redacted) await auditRedaction(deps, scope, ctx, counts, 'learn');
  return {
    task: fields.task ?? '', code: fields.code ?? '', output: fields.output ?? null,
    run_id: fields.run_id ?? null, author: fields.author ?? null, redacted,
  };
}

/**
 * The nearest stored pattern whose task is near-identical (meaning AND wording in the same
 * order: core/near-identical.ts), if any. The new task's words are worked out once.
 */
async function findNearIdentical(
  deps: ServiceDeps,
  scope: Scope,
  vector: Float32Array,
  task: string,
): Promise<PatternRecord | null> {
  // No meaning, no neighbours by meaning (docs/behavior.md "Learn" 5 needs similarity ≥ 0.9).
  if (!isMeaningfulVector(vector)) return null;
  const nearest = await deps.storage.patterns.search(scope, vector, NEAR_IDENTICAL_CANDIDATES);
  const words = taskWords(task);
  // Nearest first: the first that passes both rules is the one.
  return nearest.find(({ pattern, similarity }) => isNearIdentical(similarity, words, pattern.task))?.pattern ?? null;
}

/**
 * The plan's pattern quota (billing on) and a key's max_patterns → 429 quota_exceeded. Returns
 * the tenant's quota for recordLearn to check again with the insert.
 */
async function enforcePatternQuota(deps: ServiceDeps, scope: Scope, ctx: RequestContext, now: Date): Promise<TenantPatternQuota | null> {
  const limit = ctx.max_patterns;
  const tenantQuota = (await deps.billing?.checkPatterns(scope, 1)) ?? null;
  if (limit === null || limit === undefined) return tenantQuota;
  const current = await deps.storage.patterns.count(scope);
  if (current >= limit) throw new QuotaExceededError('patterns', current, limit, resetDate(now));
  return tenantQuota;
}
