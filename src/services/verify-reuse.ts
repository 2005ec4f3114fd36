import { createHash } from 'node:crypto';
import { ValidationError } from '../core/errors.js';
import { applyVerdict, type TierDecision, type TierPolicyName } from '../core/tier-policy.js';
import { parseVerdicts } from '../core/verification.js';
import type { ReuseVerification } from '../contracts/memory.js';
import type { PatternRecord, ReuseTier, Scope } from '../core/types.js';
import type { Llm } from '../ports/llm.js';
import type { ServiceDeps } from './deps.js';
import { FENCE_RULE, VERIFY_CODE_CHARS as CODE_CHARS, extractJson, fence } from './llm-support.js';

/**
 * Verified reuse (opt-in `verify: true` on recall): a second opinion from the LLM on the
 * page's reusable matches. Similarity says "these words are close"; the LLM reads the stored
 * code and says whether it solves the new task as is (duplicate), with changes (adapt) or not
 * at all (fresh). A verdict can lower a tier; under the calibrated policy it can also raise a
 * match it read from adapt to duplicate (core/tier-policy.ts applyVerdict). One call covers the whole page; verdicts
 * are cached by (scope, task text, pattern key, the pattern's content), so a repeated recall
 * costs nothing and a pattern whose solution was replaced is judged again. The content stands
 * for "last update" because updated_at also moves on every reuse bump of a POST recall, which
 * would make every repeated recall a cache miss.
 */
export interface PageReview {
  /** Final tier decision per pattern id (the policy's, changed by the verdict). */
  decisions: Map<string, TierDecision>;
  /** Per pattern id: the verdict, or null when the match was not verified. */
  verifications: Map<string, ReuseVerification | null>;
  warnings: string[];
}

const CACHE_SIZE = 2000;

const SYSTEM =
  'You review whether stored code can be reused for a new programming task. For each numbered candidate, ' +
  'give one verdict: "duplicate" when the stored code solves the new task as it is, "adapt" when it solves a ' +
  'closely related task and needs changes, "fresh" when it does a different job and should not be reused. ' +
  'Judge by what the code does, not by words the tasks share. ' + FENCE_RULE +
  ' Reply with a JSON object only: {"verdicts": [{"candidate": 1, "verdict": "adapt", "reason": "one short sentence"}]}, ' +
  'one entry per candidate.';

/** verify: true needs an LLM; without one the request is invalid (422), before any work. */
export function assertCanVerify(deps: ServiceDeps, field: string): void {
  if (!deps.llm) {
    throw new ValidationError(`${field} needs an LLM: set SERVICE_LLM_PROVIDER (and its API key) on the server`, [
      { path: field, message: 'no LLM is configured (SERVICE_LLM_PROVIDER)' },
    ]);
  }
}

export async function reviewPage(
  deps: ServiceDeps,
  scope: Scope,
  task: string,
  page: { id: string }[],
  initial: ReadonlyMap<string, TierDecision>,
  policy: TierPolicyName,
): Promise<PageReview> {
  const llm = deps.llm;
  if (!llm) throw new Error('reviewPage called without an LLM (assertCanVerify first)');
  const decisions = new Map(initial);
  const tierOf = (id: string): ReuseTier => decisions.get(id)?.tier ?? 'fresh';
  const verifications = new Map<string, ReuseVerification | null>(page.map((c) => [c.id, null]));
  const warnings: string[] = [];
  const reusable = page.filter((c) => tierOf(c.id) !== 'fresh');
  if (reusable.length === 0) return { decisions, verifications, warnings };

  const records = new Map((await deps.storage.patterns.getMany(scope, reusable.map((c) => c.id))).map((r) => [r.id, r]));
  const cache = cacheFor(llm);
  const toAsk: PatternRecord[] = [];
  for (const c of reusable) {
    const record = records.get(c.id);
    if (!record) continue;
    const cached = cache.get(cacheKey(scope, task, record));
    if (cached) {
      deps.instruments.verification?.({ kind: 'cache_hit' });
      verifications.set(c.id, cached);
    } else {
      toAsk.push(record);
    }
  }
  const max = deps.config.recall.verify.max;
  if (toAsk.length > max) {
    warnings.push(`${toAsk.length - max} reusable match(es) were not verified: at most ${max} per recall (SERVICE_RECALL_VERIFY_MAX)`);
  }
  const asked = toAsk.slice(0, max);
  if (asked.length > 0) {
    const answered = await ask(deps, llm, task, asked, warnings);
    for (const [id, verification] of answered) {
      cache.set(cacheKey(scope, task, records.get(id)!), verification);
      verifications.set(id, verification);
    }
  }
  for (const [id, verification] of verifications) {
    const decision = decisions.get(id);
    if (verification && decision) decisions.set(id, applyVerdict(policy, decision, verification.verdict));
  }
  return { decisions, verifications, warnings };
}

/** One call for all of `records`; what could not be read is left out, with a warning. */
async function ask(deps: ServiceDeps, llm: Llm, task: string, records: PatternRecord[], warnings: string[]): Promise<Map<string, ReuseVerification>> {
  const candidates = records.map((r, i) => `Candidate ${i + 1}:\n${fence('stored_task', r.task)}\n${fence('code', clip(r.code))}`);
  const prompt = `${fence('task', task)}\n\n${candidates.join('\n\n')}\n\nGive a verdict for each of the ${records.length} candidate(s).`;
  let text: string;
  try {
    ({ text } = await llm.complete({ system: SYSTEM, prompt, temperature: 0, maxTokens: 120 + 120 * records.length, json: true }));
  } catch (err) {
    deps.logger.warn({ err }, 'reuse verification: LLM call failed; tiers stay as similarity gave them');
    deps.instruments.verification?.({ kind: 'call', outcome: 'error' });
    warnings.push('verification failed (the LLM did not answer); tiers are from similarity alone');
    return new Map();
  }
  const verdicts = parseVerdicts(extractJson(text), records.length);
  if (verdicts.size === 0) {
    deps.logger.warn({ reply_chars: text.length }, 'reuse verification: unreadable LLM answer');
    deps.instruments.verification?.({ kind: 'call', outcome: 'unparsable' });
    warnings.push('verification failed (the LLM answer could not be read); tiers are from similarity alone');
    return new Map();
  }
  deps.instruments.verification?.({ kind: 'call', outcome: 'ok' });
  const out = new Map<string, ReuseVerification>();
  records.forEach((r, i) => {
    const v = verdicts.get(i + 1);
    if (!v) return;
    deps.instruments.verification?.({ kind: 'verdict', verdict: v.verdict });
    out.set(r.id, { ...v, model: llm.model });
  });
  if (out.size < records.length) warnings.push(`${records.length - out.size} match(es) got no readable verdict; their tiers are from similarity alone`);
  return out;
}

function clip(code: string): string {
  return code.length <= CODE_CHARS ? code : `${code.slice(0, CODE_CHARS)}\n… (${code.length - CODE_CHARS} more characters not shown)`;
}

/** Scope is part of the key: a verdict (and its reason) never crosses tenants or projects. */
function cacheKey(scope: Scope, task: string, record: PatternRecord): string {
  return createHash('sha256')
    .update(JSON.stringify([scope.tenant_id, scope.project_id, task, record.id, record.task, record.code]))
    .digest('hex');
}

/** An LRU of verdicts per LLM (per app: tests and servers never share one). */
const caches = new WeakMap<Llm, Map<string, ReuseVerification>>();
function cacheFor(llm: Llm): { get(key: string): ReuseVerification | undefined; set(key: string, v: ReuseVerification): void } {
  let map = caches.get(llm);
  if (!map) caches.set(llm, (map = new Map()));
  const m = map;
  return {
    get(key) {
      const v = m.get(key);
      if (v) {
        m.delete(key);
        m.set(key, v);
      }
      return v;
    },
    set(key, v) {
      m.delete(key);
      m.set(key, v);
      if (m.size > CACHE_SIZE) m.delete(m.keys().next().value!);
    },
  };
}
