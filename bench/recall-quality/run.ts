import { join } from 'node:path';
import { cpus } from 'node:os';
import { repoRoot, UsageError } from '../args.js';
import { syntheticRuns } from '../synthetic.js';
import type { ServiceDeps } from '../../src/services/deps.js';
import {
  ask, calibrationSet, conalaSet, mbppSet, depsFor, openModel, openTempStore, runSet, SCOPE, VARIANTS, withDistractors, type QualityResult, type Share, type Variant,
} from './protocol.js';
import { CORPORA, corpusOption, type Corpus } from '../corpora.js';
import { codeTermText } from '../../src/core/code-terms.js';
import type { LabelledSet } from './protocol.js';

/**
 * `npm run bench -- --recall-quality`: the recall-quality protocol (protocol.ts) on CoNaLa and
 * the project's calibration set, before (cosine ranking, fixed tiers) and after (hybrid
 * ranking, the model's calibrated policy), then the recall CPU per request on a synthetic
 * 10k-pattern store, both variants interleaved on the same store so a shared machine's load
 * falls on both alike.
 */
export const RECALL_QUALITY_USAGE = `usage: npm run bench -- --recall-quality [--conala FILE] [--model PATH] [--cost-size 10000] [--cost-queries 300]
  --conala FILE       the CoNaLa recall set (default test/fixtures/recall/conala-recall.json)
  --mbpp FILE         the MBPP development set (default test/fixtures/recall/mbpp-dev.json)
  --model PATH        embedding model folder (default: the bundled models/use-lite-static-m2v)
  --cost-size N       patterns in the store the per-request cost is measured on (default 10000; 0: skip)
  --cost-queries N    recalls per variant for the cost (default 300)
  --cost-only         only the per-request cost
  --vector-weight W   the blend's vector weight (default: SERVICE_RECALL_VECTOR_WEIGHT's default)
  --ranking K=V,...   other ranking settings for the run, e.g. SERVICE_RECALL_NGRAM_WEIGHT=0.25,SERVICE_RECALL_REMOVED_COMPONENTS=0
  --at-size N         also run CoNaLa in a project grown to N patterns by synthetic distractors, once
                      per corpus of --distractors (default 0: skip; 10000 is the cost measurement's size)
  --distractors LIST  the distractors' corpora, comma-separated: templated, zipfian (default both)`;

interface Options {
  conala: string; mbpp: string; ranking: Record<string, string>; model: string; costSize: number; costQueries: number; costOnly: boolean; vectorWeight: number | null;
  atSize: number; distractors: Corpus[];
}

export function parseRecallQualityArgs(argv: string[]): Options {
  const root = repoRoot();
  const o: Options = {
    conala: join(root, 'test', 'fixtures', 'recall', 'conala-recall.json'),
    mbpp: join(root, 'test', 'fixtures', 'recall', 'mbpp-dev.json'),
    ranking: {},
    model: join(root, 'models', 'use-lite-static-m2v'),
    costSize: 10_000,
    costQueries: 300,
    costOnly: false,
    vectorWeight: null,
    atSize: 0,
    distractors: [...CORPORA],
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--recall-quality') continue;
    if (flag === '--cost-only') {
      o.costOnly = true;
      continue;
    }
    if (value === undefined) throw new UsageError(`${flag} needs a value`);
    if (flag === '--conala') o.conala = value;
    else if (flag === '--mbpp') o.mbpp = value;
    else if (flag === '--ranking') o.ranking = rankingSettings(value);
    else if (flag === '--model') o.model = value;
    else if (flag === '--cost-size') o.costSize = Number(value);
    else if (flag === '--cost-queries') o.costQueries = Number(value);
    else if (flag === '--vector-weight') o.vectorWeight = Number(value);
    else if (flag === '--at-size') o.atSize = Number(value);
    else if (flag === '--distractors') o.distractors = value.split(',').map((c) => corpusOption(c.trim()));
    else throw new UsageError(`unknown option "${flag}"\n${RECALL_QUALITY_USAGE}`);
    i++;
  }
  if (!Number.isInteger(o.costSize) || o.costSize < 0) throw new UsageError('--cost-size needs a whole number');
  if (!Number.isInteger(o.atSize) || o.atSize < 0) throw new UsageError('--at-size needs a whole number');
  if (!Number.isInteger(o.costQueries) || o.costQueries <= 0) throw new UsageError('--cost-queries needs a positive whole number');
  return o;
}

function rankingSettings(value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of value.split(',')) {
    const [key, setting] = pair.split('=');
    if (!key?.startsWith('SERVICE_RECALL_') || setting === undefined) throw new UsageError(`--ranking takes SERVICE_RECALL_…=value pairs, not "${pair}"`);
    out[key.trim()] = setting.trim();
  }
  return out;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const ratio = (s: Share) => (s.of === 0 ? '-' : `${s.count}/${s.of} (${pct(s.count / s.of)})`);

function qualityTable(results: QualityResult[]): string {
  const rows = [
    ['set', 'variant', 'queries', 'p@1', 'p@5', 'MRR@10', 'true dup', 'true ≥adapt', 'neg dup', 'neg ≥adapt', 'left-out dup', 'left-out ≥adapt', 'unrelated ≥adapt'],
    ...results.map((r) => [
      r.set, `${r.variant.name} (${r.variant.ranking}, ${r.variant.policy})`, String(r.queries), pct(r.precisionAt1), pct(r.precisionAt5), r.mrr.toFixed(3),
      ratio(r.trueAtDuplicate), ratio(r.trueAtAdapt), ratio(r.negativesAtDuplicate), ratio(r.negativesAtAdapt),
      ratio(r.leftOutAtDuplicate), ratio(r.leftOutAtAdapt), ratio(r.unrelatedAtAdapt),
    ]),
  ];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c])).join('  ')).join('\n');
}

/** CPU µs per recall of each variant on one store of `size` synthetic patterns (embeddings cached first). */
async function measureCost(modelPath: string, model: Awaited<ReturnType<typeof openModel>>, size: number, queries: number): Promise<Record<Variant['name'], { cpuUs: number; wallUs: number }>> {
  const store = await openTempStore();
  try {
    const runs = syntheticRuns(42, size + queries);
    const deps: Record<string, ServiceDeps> = {};
    for (const v of VARIANTS) deps[v.name] = await depsFor(model.config, model.embedder, store.storage, v, modelPath);
    const fillDeps = deps.after;
    for (let i = 0; i < size; i += 256) {
      const batch = runs.slice(i, Math.min(size, i + 256));
      const vectors = await fillDeps.embedder.embed(batch.map((r) => r.task));
      for (const [j, r] of batch.entries()) {
        const id = `c${String(i + j).padStart(7, '0')}`;
        const now = new Date(Date.UTC(2026, 0, 1) + (i + j) * 1000).toISOString();
        await store.storage.patterns.insert(SCOPE, {
          id, task: r.task, code: r.code, output: null, eval_score: r.eval_score, success_score: r.eval_score, reuse_count: 0, run_id: null,
          classification: 'internal', source: 'api', author: null, expires_at: null, redacted: false, created_at: now, updated_at: now, last_aged_at: null,
        }, vectors[j]);
      }
    }
    const tasks = runs.slice(size).map((r) => r.task);
    await fillDeps.embedder.embed(tasks); // cached: the cost below is ranking, not embedding
    for (const v of VARIANTS) for (const t of tasks.slice(0, 20)) await ask(deps[v.name], t); // warm-up (and the first fit)
    const totals: Record<string, { cpu: number; wall: number }> = { before: { cpu: 0, wall: 0 }, after: { cpu: 0, wall: 0 } };
    for (const t of tasks) {
      for (const v of VARIANTS) {
        const cpu = process.cpuUsage();
        const wall = performance.now();
        await ask(deps[v.name], t);
        const used = process.cpuUsage(cpu);
        totals[v.name].cpu += used.user + used.system;
        totals[v.name].wall += (performance.now() - wall) * 1000;
      }
    }
    return {
      before: { cpuUs: totals.before.cpu / tasks.length, wallUs: totals.before.wall / tasks.length },
      after: { cpuUs: totals.after.cpu / tasks.length, wallUs: totals.after.wall / tasks.length },
    };
  } finally {
    await store.remove();
  }
}

/**
 * What ranking keeps per pattern beyond its task and vector, averaged over a set's stored
 * patterns: the code's term bag (core/code-terms.ts), kept as text beside the task on both
 * storages and as posting entries (PostgreSQL: one recall_postings row per distinct term).
 */
function bytesPerPattern(set: LabelledSet): string {
  const codes = [...set.groups.flatMap((g) => g.stored.map(() => g.code)), ...(set.distractors ?? []).map((d) => d.code)];
  if (codes.length === 0) return 'no patterns';
  let bag = 0;
  let distinct = 0;
  for (const code of codes) {
    const text = codeTermText(code);
    bag += Buffer.byteLength(text);
    distinct += new Set(text.split(' ').filter(Boolean)).size;
  }
  return `code term bag ${(bag / codes.length).toFixed(0)} bytes per pattern, ${(distinct / codes.length).toFixed(1)} code postings per pattern`;
}

export async function runRecallQualityBench(argv: string[]): Promise<void> {
  const o = parseRecallQualityArgs(argv);
  if (o.vectorWeight !== null && !(o.vectorWeight >= 0 && o.vectorWeight <= 1)) throw new UsageError('--vector-weight needs a number from 0 to 1');
  const model = await openModel(o.model, o.vectorWeight, o.ranking);
  try {
    const conala = conalaSet(o.conala);
    const sets = [conala, mbppSet(o.mbpp), calibrationSet(join(repoRoot(), 'test', 'fixtures', 'calibration', 'programming-tasks.json'))];
    if (o.atSize > 0) sets.push(...o.distractors.map((corpus) => withDistractors(conala, o.atSize, corpus)));
    const results: QualityResult[] = [];
    for (const set of o.costOnly ? [] : sets) {
      for (const v of VARIANTS) {
        process.stderr.write(`recall quality: ${set.name}, ${v.name}...\n`);
        results.push(await runSet(o.model, model, set, v));
      }
    }
    const cpu = cpus();
    const lines = [
      'Recall quality (issue 27): before = cosine ranking + fixed tiers; after = hybrid ranking + the model\'s tier policy',
      `node ${process.version}, ${cpu.length} CPU(s) ${cpu[0]?.model ?? ''}; model ${o.model}; JSON storage${Object.keys(o.ranking).length ? `; ${JSON.stringify(o.ranking)}` : ''}`,
      '',
      qualityTable(results),
      '',
      ...results.filter((r) => r.variant.name === 'after').map((r) => `${r.set} tier policy (after): ${JSON.stringify(r.tierPolicy)}`),
      '',
      ...sets.map((s) => `${s.name}: ${bytesPerPattern(s)}`),
    ];
    if (o.costSize > 0) {
      process.stderr.write(`recall cost: ${o.costSize} patterns, ${o.costQueries} queries per variant...\n`);
      const cost = await measureCost(o.model, model, o.costSize, o.costQueries);
      lines.push('', `recall cost per request at ${o.costSize} patterns (${o.costQueries} queries each, interleaved, embeddings cached; shared machine):`);
      for (const v of VARIANTS) lines.push(`  ${v.name.padEnd(6)} CPU ${(cost[v.name].cpuUs / 1000).toFixed(3)} ms, wall ${(cost[v.name].wallUs / 1000).toFixed(3)} ms`);
      lines.push(`  after − before: CPU ${((cost.after.cpuUs - cost.before.cpuUs) / 1000).toFixed(3)} ms per request`);
    }
    console.log(lines.join('\n'));
  } finally {
    await model.embedder.close();
  }
}
