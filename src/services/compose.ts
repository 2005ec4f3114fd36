import { LlmNotConfiguredError } from '../core/errors.js';
import { validatePipeline } from '../core/pipeline.js';
import type { ComposeInput, ComposeResponse, PipelineStage } from '../contracts/llm.js';
import type { Scope } from '../core/types.js';
import type { ServiceDeps } from './deps.js';
import { askJson, fence, FENCE_RULE } from './llm-support.js';
import { recall } from './recall.js';

interface PlannedStage {
  name: string;
  task: string;
  reads: string[];
  writes: string[];
}

export const MIN_STAGES = 2;
export const MAX_STAGES = 4;

export const COMPOSER_SYSTEM = [
  'You design data pipelines for AI coding agents.',
  FENCE_RULE,
  `Split the task into ${MIN_STAGES} to ${MAX_STAGES} sequential stages. Each stage has a short name, its own task description, ` +
    'the files or artifacts it reads, and the files or artifacts it writes. A stage may only read what the task provides ' +
    'as input or what an earlier stage writes; never read and write the same file in one stage; never let two stages write ' +
    'the same file.',
  'Reply with one JSON object only: {"stages": [{"name": string, "task": string, "reads": [string], "writes": [string]}]}.',
].join('\n');

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** The planner's reply, or null when it is not 2–4 well-formed stages. */
export function parseStages(value: unknown): PlannedStage[] | null {
  if (typeof value !== 'object' || value === null) return null;
  const stages = (value as { stages?: unknown }).stages;
  if (!Array.isArray(stages) || stages.length < MIN_STAGES || stages.length > MAX_STAGES) return null;
  const planned: PlannedStage[] = [];
  for (const raw of stages) {
    if (typeof raw !== 'object' || raw === null) return null;
    const s = raw as Record<string, unknown>;
    if (typeof s.name !== 'string' || s.name.trim() === '' || typeof s.task !== 'string' || s.task.trim() === '') return null;
    const reads = s.reads ?? [];
    const writes = s.writes ?? [];
    if (!isStringList(reads) || !isStringList(writes)) return null;
    planned.push({ name: s.name.trim(), task: s.task.trim(), reads, writes });
  }
  return planned;
}

/**
 * POST /v1/compose (docs/behavior.md "Compose"): one planning call (malformed → retried once →
 * 502), a read-only recall (limit 1) per stage, then contract validation of the data flow.
 */
export async function compose(deps: ServiceDeps, scope: Scope, input: ComposeInput): Promise<ComposeResponse> {
  const { llm } = deps;
  if (!llm) throw new LlmNotConfiguredError();

  const planned = await askJson(
    llm,
    { system: COMPOSER_SYSTEM, prompt: `${fence('task', input.task)}\n\nPlan the stages for the task above.`, temperature: 0.2, maxTokens: 1200, json: true },
    parseStages,
    { what: 'pipeline stages', logger: deps.logger },
  );

  const stages = await Promise.all(
    planned.map(async (stage): Promise<PipelineStage> => {
      const { result } = await recall(
        deps,
        scope,
        // The contract's defaults, spelt out: no recency weighting (so the half-life plays no part).
        { task: stage.task, limit: 1, offset: 0, deduplicate: true, eval_weighted: true, recency_weight: 0, recency_half_life_days: 30 },
        { readonly: true },
      );
      const best = result.matches[0];
      return {
        ...stage,
        reuse_tier: best?.reuse_tier ?? 'fresh',
        similarity: best?.similarity ?? 0,
        code: best?.pattern.code ?? '',
        pattern_key: best?.pattern_key ?? null,
      };
    }),
  );

  const contract_errors = validatePipeline(input.task, stages);
  return { task: input.task, stages, valid: contract_errors.length === 0, contract_errors };
}
