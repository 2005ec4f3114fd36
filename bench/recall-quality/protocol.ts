import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbedder, type CachedEmbedder } from '../../src/adapters/embeddings/index.js';
import { resolveReuseTiers } from '../../src/adapters/embeddings/model-tiers.js';
import { createJsonStorage } from '../../src/adapters/storage/json/index.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { RecallResponse } from '../../src/contracts/memory.js';
import type { PatternRecord, ReuseTier, Scope } from '../../src/core/types.js';
import { systemClock } from '../../src/ports/clock.js';
import { noopInstruments, silentLogger } from '../../src/ports/observability.js';
import type { Storage } from '../../src/ports/storage.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import { createQueryDots } from '../../src/adapters/storage/json/engine/index.js';
import { recall } from '../../src/services/recall.js';
import { zipfianTasks, type Corpus } from '../corpora.js';
import { syntheticRuns, templatedTask } from '../synthetic.js';

/**
 * The recall-quality protocol (issue 27; /work/shared/data/README.md for CoNaLa): store the
 * first wording of every group as a pattern, query with every other wording, and read where
 * the group's own pattern lands and which tier it gets. Hard negatives and left-out groups are
 * queried with their group removed from the store: whatever comes first is a different task.
 * Runs through the recall service on a JSON store, exactly as a request would.
 */
export const SCOPE: Scope = { tenant_id: 'bench', project_id: 'recall-quality' };

/** One labelled set in the protocol's shape. */
export interface LabelledSet {
  name: string;
  groups: { id: string; stored: string[]; queries: string[]; code: string }[];
  /** Tasks that look like a stored group's task but ask something else (queried with that group kept). */
  lookalikes: { text: string; group: string }[];
  /** Hard negatives: groups whose first wording is queried with the group removed (a lookalike is stored). */
  hardNegativeGroups: string[];
  /** Left-out groups: every wording queried with the group removed (nothing right is stored). */
  leftOutGroups: string[];
  /** Tasks with no stored counterpart. */
  unrelated: string[];
  /**
   * Patterns stored beside the groups that no query is about (none: the set alone). They grow
   * the project to the size where the keyword side's per-term cap (core/bm25.ts
   * selectiveDocCap) decides, not its floor, and make the words they share with the set common.
   */
  distractors?: { task: string; code: string }[];
}

export interface Variant {
  name: 'before' | 'after';
  ranking: 'cosine' | 'hybrid';
  policy: 'fixed' | 'calibrated';
}

export const VARIANTS: Variant[] = [
  { name: 'before', ranking: 'cosine', policy: 'fixed' },
  { name: 'after', ranking: 'hybrid', policy: 'calibrated' },
];

export interface Share { count: number; of: number }

export interface QualityResult {
  set: string;
  variant: Variant;
  queries: number;
  precisionAt1: number;
  precisionAt5: number;
  mrr: number;
  trueAtDuplicate: Share;
  trueAtAdapt: Share;
  negativesAtDuplicate: Share;
  negativesAtAdapt: Share;
  leftOutAtDuplicate: Share;
  leftOutAtAdapt: Share;
  unrelatedAtAdapt: Share;
  tierPolicy: RecallResponse['tier_policy'];
}

const LIMIT = 10;

export function conalaSet(file: string): LabelledSet {
  const data = JSON.parse(readFileSync(file, 'utf8')) as {
    groups: { id: string; phrasings: string[]; solution: string }[];
    hard_negatives: { a: string; b: string }[];
  };
  // Every seventh group is also queried left out (its other wordings then have no own pattern).
  const leftOut = data.groups.filter((_, i) => i % 7 === 3);
  return {
    name: 'CoNaLa',
    groups: data.groups.map((g) => ({ id: g.id, stored: [g.phrasings[0]], queries: g.phrasings.slice(1), code: g.solution })),
    lookalikes: [],
    hardNegativeGroups: [...new Set(data.hard_negatives.map((h) => h.b))],
    leftOutGroups: leftOut.map((g) => g.id),
    unrelated: [],
  };
}

/**
 * MBPP's development set (test/fixtures/recall/README.md): the original task text stored with
 * its solution, asked with its machine paraphrases and its typo variant; hard negatives queried
 * with their `b` problem removed; every seventh problem also asked left out, as CoNaLa's.
 */
export function mbppSet(file: string): LabelledSet {
  const data = JSON.parse(readFileSync(file, 'utf8')) as {
    groups: { id: string; phrasings: string[]; typo_variant?: string; solution: string }[];
    hard_negatives: { a: string; b: string }[];
  };
  const leftOut = data.groups.filter((_, i) => i % 7 === 3);
  return {
    name: 'MBPP dev',
    groups: data.groups.map((g) => ({
      id: g.id, stored: [g.phrasings[0]], queries: [...g.phrasings.slice(1), ...(g.typo_variant ? [g.typo_variant] : [])], code: g.solution,
    })),
    lookalikes: [],
    hardNegativeGroups: [...new Set(data.hard_negatives.map((h) => h.b))],
    leftOutGroups: leftOut.map((g) => g.id),
    unrelated: [],
  };
}

/**
 * `set` with synthetic patterns stored beside it until the project holds `size` patterns (none
 * when it already does): the same questions asked of a store the size of the cost measurement's.
 */
export function withDistractors(set: LabelledSet, size: number, corpus: Corpus): LabelledSet {
  const stored = set.groups.reduce((n, g) => n + g.stored.length, 0);
  const count = Math.max(0, size - stored);
  if (count === 0) return set;
  const runs = syntheticRuns(7, count, corpus === 'zipfian' ? zipfianTasks() : templatedTask);
  return { ...set, name: `${set.name} + ${count} ${corpus}`, distractors: runs };
}

export function calibrationSet(file: string): LabelledSet {
  const data = JSON.parse(readFileSync(file, 'utf8')) as {
    clusters: { id: string; wordings: string[]; lookalikes?: string[] }[];
    unrelated?: string[];
  };
  return {
    name: 'calibration',
    groups: data.clusters.map((c) => ({ id: c.id, stored: c.wordings.slice(0, -1), queries: c.wordings.slice(-1), code: `# ${c.id}` })),
    lookalikes: data.clusters.flatMap((c) => (c.lookalikes ?? []).map((text) => ({ text, group: c.id }))),
    hardNegativeGroups: [],
    leftOutGroups: [],
    unrelated: data.unrelated ?? [],
  };
}

/** The embedder of the model folder, with its tiers resolved as the server would (policy forced per variant). */
export async function openModel(
  modelPath: string, vectorWeight: number | null = null, ranking: Record<string, string> = {},
): Promise<{ config: Config; embedder: CachedEmbedder }> {
  const env: Record<string, string> = { SERVICE_LOCAL_EMBEDDINGS: 'true', SERVICE_EMBEDDING_MODEL_PATH: modelPath, SERVICE_LLM_PROVIDER: 'none', ...ranking };
  if (vectorWeight !== null) env.SERVICE_RECALL_VECTOR_WEIGHT = String(vectorWeight);
  const config = loadConfig(env);
  const embedder = await createEmbedder(config, { logger: silentLogger, instruments: noopInstruments });
  await embedder.embed(['model check']);
  return { config, embedder };
}

export async function depsFor(config: Config, embedder: CachedEmbedder, storage: Storage, variant: Variant, modelPath: string): Promise<ServiceDeps> {
  const reuseTiers = await resolveReuseTiers({
    env: { duplicate: null, adapt: null, policy: variant.policy },
    modelFolder: modelPath,
    modelId: embedder.info.model,
  });
  return {
    config: { ...config, recall: { ...config.recall, ranking: { ...config.recall.ranking, mode: variant.ranking } } },
    storage, embedder, llm: null, clock: systemClock, logger: silentLogger, instruments: noopInstruments, keyStore: null, reuseTiers, queryDots: createQueryDots(),
  };
}

export async function openTempStore(): Promise<{ storage: Storage; remove(): Promise<void> }> {
  const dataPath = await mkdtemp(join(tmpdir(), 'service-recall-quality-'));
  const storage = await createJsonStorage({ dataPath });
  return { storage, remove: async () => { await storage.close(); await rm(dataPath, { recursive: true, force: true }); } };
}

function record(id: string, task: string, code: string): PatternRecord {
  const now = '2026-01-01T00:00:00.000Z';
  return {
    id, task, code, output: null, eval_score: 8, success_score: 8, reuse_count: 0, run_id: null, classification: 'internal',
    source: 'api', author: null, expires_at: null, redacted: false, created_at: now, updated_at: now, last_aged_at: null,
  };
}

/** Pattern ids: path-safe, in group order. */
const idOf = (group: number, wording: number) => `g${String(group).padStart(5, '0')}w${wording}`;

/** Stores every group's stored wordings; returns group id → its pattern ids and records. */
export async function fill(deps: ServiceDeps, set: LabelledSet): Promise<Map<string, { record: PatternRecord; vector: Float32Array }[]>> {
  const byGroup = new Map<string, { record: PatternRecord; vector: Float32Array }[]>();
  for (const [g, group] of set.groups.entries()) {
    const vectors = await deps.embedder.embed(group.stored);
    const rows = group.stored.map((task, w) => ({ record: record(idOf(g, w), task, group.code), vector: vectors[w] }));
    for (const row of rows) await deps.storage.patterns.insert(SCOPE, row.record, row.vector);
    byGroup.set(group.id, rows);
  }
  const distractors = set.distractors ?? [];
  for (let i = 0; i < distractors.length; i += 256) {
    const batch = distractors.slice(i, i + 256);
    const vectors = await deps.embedder.embed(batch.map((r) => r.task));
    for (const [j, r] of batch.entries()) {
      await deps.storage.patterns.insert(SCOPE, record(`d${String(i + j).padStart(7, '0')}`, r.task, r.code), vectors[j]);
    }
  }
  return byGroup;
}

export async function ask(deps: ServiceDeps, task: string): Promise<RecallResponse> {
  const { result } = await recall(deps, SCOPE, {
    task, limit: LIMIT, offset: 0, deduplicate: true, eval_weighted: true, recency_weight: 0, recency_half_life_days: 30, explain: true,
  }, { readonly: true });
  return result;
}

const share = (count: number, of: number): Share => ({ count, of });
const atLeastAdapt = (t: ReuseTier | undefined) => t === 'adapt' || t === 'duplicate';

/** Runs the protocol for one set and variant on a store already filled by `fill`. */
export async function measureSet(
  deps: ServiceDeps, set: LabelledSet, stored: Map<string, { record: PatternRecord; vector: Float32Array }[]>, variant: Variant,
): Promise<QualityResult> {
  let queries = 0; let p1 = 0; let p5 = 0; let rr = 0; let trueDup = 0; let trueAdapt = 0;
  let tierPolicy: RecallResponse['tier_policy'];
  for (const group of set.groups) {
    const own = new Set((stored.get(group.id) ?? []).map((r) => `patterns/${r.record.id}`));
    for (const query of group.queries) {
      const res = await ask(deps, query);
      tierPolicy = res.tier_policy;
      queries++;
      const rank = res.matches.findIndex((m) => own.has(m.pattern_key));
      if (rank === 0) p1++;
      if (rank >= 0 && rank < 5) p5++;
      if (rank >= 0) rr += 1 / (rank + 1);
      const tier = rank >= 0 ? res.matches[rank].reuse_tier : undefined;
      if (tier === 'duplicate') trueDup++;
      if (atLeastAdapt(tier)) trueAdapt++;
    }
  }
  // Hard negatives and left-out queries: the first match is a different task, whatever it is.
  const negatives = { n: 0, dup: 0, adapt: 0 };
  const leftOut = { n: 0, dup: 0, adapt: 0 };
  const countTop = (into: typeof negatives, res: RecallResponse) => {
    into.n++;
    const tier = res.matches[0]?.reuse_tier;
    if (tier === 'duplicate') into.dup++;
    if (atLeastAdapt(tier)) into.adapt++;
  };
  for (const l of set.lookalikes) countTop(negatives, await ask(deps, l.text));
  const withoutGroup = async (id: string, texts: (g: LabelledSet['groups'][number]) => string[], into: typeof negatives) => {
    const group = set.groups.find((g) => g.id === id);
    const rows = stored.get(id);
    if (!group || !rows) return;
    for (const row of rows) await deps.storage.patterns.delete(SCOPE, row.record.id);
    for (const text of texts(group)) countTop(into, await ask(deps, text));
    for (const row of rows) await deps.storage.patterns.insert(SCOPE, row.record, row.vector);
  };
  for (const id of set.hardNegativeGroups) await withoutGroup(id, (g) => g.stored.slice(0, 1), negatives);
  for (const id of set.leftOutGroups) await withoutGroup(id, (g) => [...g.stored, ...g.queries], leftOut);
  let unrelatedAdapt = 0;
  for (const text of set.unrelated) if (atLeastAdapt((await ask(deps, text)).matches[0]?.reuse_tier)) unrelatedAdapt++;
  return {
    set: set.name,
    variant,
    queries,
    precisionAt1: p1 / queries,
    precisionAt5: p5 / queries,
    mrr: rr / queries,
    trueAtDuplicate: share(trueDup, queries),
    trueAtAdapt: share(trueAdapt, queries),
    negativesAtDuplicate: share(negatives.dup, negatives.n),
    negativesAtAdapt: share(negatives.adapt, negatives.n),
    leftOutAtDuplicate: share(leftOut.dup, leftOut.n),
    leftOutAtAdapt: share(leftOut.adapt, leftOut.n),
    unrelatedAtAdapt: share(unrelatedAdapt, set.unrelated.length),
    tierPolicy,
  };
}

/** Fills a fresh store and measures one set under one variant. */
export async function runSet(modelPath: string, model: { config: Config; embedder: CachedEmbedder }, set: LabelledSet, variant: Variant): Promise<QualityResult> {
  const store = await openTempStore();
  try {
    const deps = await depsFor(model.config, model.embedder, store.storage, variant, modelPath);
    const stored = await fill(deps, set);
    return await measureSet(deps, set, stored, variant);
  } finally {
    await store.remove();
  }
}
