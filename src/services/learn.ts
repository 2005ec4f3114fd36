import { DomainError, QuotaExceededError, EmbeddingUnavailableError } from '../core/errors.js';
import { redactFields } from '../core/redaction.js';
import { tokenJaccard } from '../core/text.js';
import { patternKey, type Classification, type PatternRecord, type Scope, type Source } from '../core/types.js';
import { auditRedaction, type RequestContext } from './audit.js';
import type { ServiceDeps } from './deps.js';
import { newId } from './ids.js';
import { checkSameJob, type DuplicateCheck } from './verify-duplicate.js';
import { assertCanVerify } from './verify-reuse.js';

/** Learn input after contract parsing (defaults applied). */
export interface LearnInput {
  task: string;
  code: string;
  eval_score: number;
  output?: string;
  run_id?: string;
  classification: Classification;
  source: Source;
  author?: string;
  expires_at?: string;
  /** (+) Ask the LLM before merging into a near-identical pattern (verify-duplicate.ts). */
  verify_duplicates?: boolean;
}

export interface LearnResult {
  stored: boolean;
  pattern_count: number;
  redacted?: true;
  pattern_key: string;
  /** (+) With verify_duplicates, when a near-identical pattern was found: the verdict (null: check failed). */
  duplicate_check?: DuplicateCheck | null;
  warnings?: string[];
}

/** docs/behavior.md "Learn" 5: candidates this close by meaning are checked for near-identical text. */
const NEAR_IDENTICAL_SIMILARITY = 0.9;
const NEAR_IDENTICAL_JACCARD = 0.92;
const NEAR_IDENTICAL_CANDIDATES = 5;

export async function learn(deps: ServiceDeps, scope: Scope, input: LearnInput, ctx: RequestContext): Promise<LearnResult> {
  const { storage, clock } = deps;
  const started = clock.now();
  if (input.verify_duplicates) assertCanVerify(deps, 'verify_duplicates');

  const { task, code, output, redacted } = await redactInput(deps, scope, input, ctx);
  await enforcePatternQuota(deps, scope, ctx, started);

  const vector = await embedTask(deps, task);
  const now = clock.now().toISOString();
  let existing = await findNearIdentical(deps, scope, vector, task);
  const checked = existing && input.verify_duplicates ? await checkSameJob(deps, { task, code }, existing) : null;
  // Similar words, different job: keep the run as a pattern of its own.
  if (checked?.check?.verdict === 'different') existing = null;

  let stored: boolean;
  let patternId: string;
  if (existing) {
    patternId = existing.id;
    // A better run of the same task replaces the old solution in place (key and reuse_count kept).
    stored = input.eval_score > existing.success_score;
    if (stored) {
      await storage.patterns.update(scope, {
        ...existing,
        code,
        output,
        eval_score: input.eval_score,
        success_score: input.eval_score,
        run_id: input.run_id ?? existing.run_id,
        redacted: existing.redacted || redacted,
        updated_at: now,
        // The replacement carries a fresh score: decay counts from now, not from the first learn.
        last_aged_at: now,
      });
    }
  } else {
    const record: PatternRecord = {
      id: newId(clock.now()),
      task,
      code,
      output,
      eval_score: input.eval_score,
      success_score: input.eval_score,
      reuse_count: 0,
      run_id: input.run_id ?? null,
      classification: input.classification,
      source: input.source,
      author: input.author ?? null,
      expires_at: input.expires_at ?? null,
      redacted,
      created_at: now,
      updated_at: now,
      last_aged_at: null,
    };
    await storage.patterns.insert(scope, record, vector);
    patternId = record.id;
    stored = true;
  }

  // The run's score is an eval observation of the pattern it landed on; it, the metrics and the
  // ROI event are independent writes, sent together.
  await Promise.all([
    storage.evals.add(scope, patternId, input.eval_score, now),
    storage.metrics.recordRun(scope, input.eval_score),
    storage.analytics.append(scope, {
      at: now,
      kind: 'learn',
      stored,
      eval_score: input.eval_score,
      latency_ms: clock.now().getTime() - started.getTime(),
    }),
  ]);

  const result: LearnResult = { stored, pattern_count: await storage.patterns.count(scope), pattern_key: patternKey(patternId) };
  if (redacted) result.redacted = true;
  if (checked) result.duplicate_check = checked.check;
  if (checked?.warning) result.warnings = [checked.warning];
  return result;
}

/** The embedder's own failures (network, model load) are an outage of a dependency: 503, not 500. */
async function embedTask(deps: ServiceDeps, task: string): Promise<Float32Array> {
  try {
    const [vector] = await deps.embedder.embed([task]);
    return vector;
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
): Promise<{ task: string; code: string; output: string | null; redacted: boolean }> {
  if (!deps.config.redaction) return { task: input.task, code: input.code, output: input.output ?? null, redacted: false };
  const { fields, counts, redacted } = redactFields({ task: input.task, code: input.code, output: input.output ?? null });
  if (redacted) await auditRedaction(deps, scope, ctx, counts, 'learn');
  return { task: fields.task ?? '', code: fields.code ?? '', output: fields.output ?? null, redacted };
}

/** The nearest stored pattern whose task is near-identical (meaning AND wording), if any. */
async function findNearIdentical(
  deps: ServiceDeps,
  scope: Scope,
  vector: Float32Array,
  task: string,
): Promise<PatternRecord | null> {
  const nearest = await deps.storage.patterns.search(scope, vector, NEAR_IDENTICAL_CANDIDATES);
  for (const { pattern, similarity } of nearest) {
    if (similarity < NEAR_IDENTICAL_SIMILARITY) break;
    if (tokenJaccard(task, pattern.task) >= NEAR_IDENTICAL_JACCARD) return pattern;
  }
  return null;
}

/** A key's max_patterns (billing plans plug in here later) → 429 quota_exceeded. */
async function enforcePatternQuota(deps: ServiceDeps, scope: Scope, ctx: RequestContext, now: Date): Promise<void> {
  const limit = ctx.max_patterns;
  if (limit === null || limit === undefined) return;
  const current = await deps.storage.patterns.count(scope);
  if (current >= limit) throw new QuotaExceededError('patterns', current, limit, firstDayOfNextMonth(now));
}

/** `YYYY-MM-DD` of the first day of the next UTC month. */
export function firstDayOfNextMonth(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
}
