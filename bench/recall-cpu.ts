import { createEmbedder } from '../src/adapters/embeddings/index.js';
import { loadConfig } from '../src/config/index.js';
import { Bm25Scorer, distinctTerms } from '../src/core/bm25.js';
import { firstFetch } from '../src/core/dedup.js';
import { blendCandidates, unitVector, type HybridCandidateSet } from '../src/core/hybrid.js';
import { QUALITY_WINDOW } from '../src/core/quality.js';
import type { RankOptions } from '../src/core/ranking.js';
import { decideTier } from '../src/core/tier-policy.js';
import { noopInstruments, silentLogger } from '../src/ports/observability.js';
import { systemClock } from '../src/ports/clock.js';
import type { ServiceDeps } from '../src/services/deps.js';
import { recall } from '../src/services/recall.js';
import { rankInSlices, recallBudget } from '../src/services/recall-dedup.js';
import { keywordShare, rescore } from '../src/services/recall-hybrid.js';
import { tierPolicyFor } from '../src/services/tier-policy.js';
import { repoRoot, UsageError } from './args.js';
import { DEV_SCOPE, fillStore } from './http/fill.js';
import { STORAGE_FACTORIES } from './storages.js';
import { syntheticQueries } from './synthetic.js';
import { join, resolve } from 'node:path';

/**
 * `npm run bench -- --recall-cpu`: CPU per recall through the service layer (no HTTP, no
 * logging) on a JSON store of synthetic patterns (the HTTP benchmark's fill), hybrid ranking
 * against SERVICE_RECALL_RANKING=cosine on the same store and the same process. Blocks of
 * queries alternate between the two rankings, so both see the same machine load; every query
 * is a task the process has not embedded before. Then the hybrid path's phases, each timed as
 * a loop over the same queries with the previous phase's output as input.
 */
const DEFAULTS = { patterns: 10_000, queries: 1_000, rounds: 5, seed: 42 };
const BLOCK = 50;
const WARMUP = 200;

interface Options {
  patterns: number;
  queries: number;
  rounds: number;
  seed: number;
  modelPath: string;
}

function parse(argv: string[]): Options {
  const o: Options = { ...DEFAULTS, modelPath: join(repoRoot(), 'models', 'use-lite-static-m2v') };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--recall-cpu') continue;
    const value = argv[++i];
    const n = Number(value);
    if (flag === '--model') {
      if (!value) throw new UsageError('--model needs a folder');
      o.modelPath = resolve(value);
      continue;
    }
    if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} needs a positive whole number, got "${value ?? ''}"`);
    if (flag === '--patterns') o.patterns = n;
    else if (flag === '--queries') o.queries = n;
    else if (flag === '--rounds') o.rounds = n;
    else if (flag === '--seed') o.seed = n;
    else throw new UsageError(`unknown option "${flag}" (--recall-cpu takes --patterns, --queries, --rounds, --seed, --model)`);
  }
  return o;
}

/**
 * CPU spent by `work`, in µs, of the whole process (process.cpuUsage: user + system of every
 * thread, the garbage collector's helpers and the file system's thread pool included; no time
 * slice lost to another process on a busy machine). Its clock includes the running slice. A
 * thread's own figure (/proc/thread-self/schedstat) was read here before, but it advances only
 * at the scheduler's ticks while the thread runs: a block shorter than a tick read as 0 (every
 * phase below the vector scan did), a longer one was off by up to a tick.
 */
async function cpuMicros(work: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const RANKING: RankOptions = { evalWeighted: true, deduplicate: true, keep: 6 };
const INPUT = { limit: 5, offset: 0, deduplicate: true, eval_weighted: true, recency_weight: 0, recency_half_life_days: 30 } as const;

type Mode = 'hybrid' | 'cosine';
type Kind = 'post' | 'get';
type Series = `${Mode} ${Kind}`;
const SERIES: Series[] = ['hybrid post', 'cosine post', 'hybrid get', 'cosine get'];

/**
 * Whole recalls: per round, blocks of BLOCK queries alternate hybrid / cosine for POST, then for
 * GET. Per series and round: µs of the process's CPU per recall over its blocks.
 */
async function wholeRecalls(deps: Record<Mode, ServiceDeps>, queries: string[], rounds: number): Promise<Record<Series, number[]>> {
  const out = {} as Record<Series, number[]>;
  for (const series of SERIES) out[series] = [];
  let next = 0;
  const fresh = () => queries[next++ % queries.length];
  const perRound = Math.floor(queries.length / rounds / 4 / BLOCK) * BLOCK || BLOCK;
  for (let round = 0; round < rounds; round++) {
    for (const kind of ['post', 'get'] as const) {
      const spent = { hybrid: 0, cosine: 0 };
      for (let done = 0; done < perRound; done += BLOCK) {
        for (const mode of ['hybrid', 'cosine'] as const) {
          spent[mode] += await cpuMicros(async () => {
            for (let i = 0; i < BLOCK; i++) await recall(deps[mode], DEV_SCOPE, { task: fresh(), ...INPUT }, { readonly: kind === 'get' });
          });
        }
      }
      for (const mode of ['hybrid', 'cosine'] as const) {
        out[`${mode} ${kind}`].push(spent[mode] / perRound);
      }
    }
  }
  return out;
}

interface Prepared {
  task: string;
  unit: Float32Array;
  terms: string[];
  set?: HybridCandidateSet;
}

/**
 * The hybrid path's phases on `tasks` (first fetch only: the usual recall never widens), and
 * the cosine path's for reference. For each block of BLOCK tasks every phase runs over the
 * block in turn (its input from the phase before), `rounds` times; the embedding is timed once
 * (later rounds would hit its cache). Reported: the median over blocks of the process's CPU per
 * task.
 */
async function phases(deps: ServiceDeps, tasks: string[], rounds: number): Promise<[string, number][]> {
  const patterns = deps.storage.patterns;
  const k = firstFetch(INPUT.offset + INPUT.limit);
  const keywordK = keywordShare(k);
  const weight = deps.config.recall.ranking.vectorWeight;
  const prepared: Prepared[] = [];
  for (const task of tasks) {
    const [v] = await deps.embedder.embed([task]);
    prepared.push({ task, unit: unitVector(v), terms: distinctTerms(task) });
  }
  const blended = new Map<Prepared, ReturnType<typeof rescore>>();
  const steps: [string, (p: Prepared) => unknown][] = [
    ['embed (model, uncached; first round only)', () => undefined],
    ['vector top-k + its candidate rows', (p) => patterns.hybridCandidates(DEV_SCOPE, { vector: p.unit, terms: [], vectorK: k, keywordK: 0, evalWindow: QUALITY_WINDOW })],
    ['keyword top-k + its candidate rows', (p) => patterns.hybridCandidates(DEV_SCOPE, { vector: p.unit, terms: p.terms, vectorK: 0, keywordK, evalWindow: QUALITY_WINDOW })],
    ['gather: both sides, union (the storage call)', async (p) => {
      p.set = await patterns.hybridCandidates(DEV_SCOPE, { vector: p.unit, terms: p.terms, vectorK: k, keywordK, evalWindow: QUALITY_WINDOW });
    }],
    ['  BM25 of every candidate (in the blend)', (p) => {
      const scorer = new Bm25Scorer(p.terms, p.set!.stats);
      for (const c of p.set!.candidates) scorer.score(c.task);
    }],
    ['blend (centred cosine, BM25, normalise)', (p) => blendCandidates(p.set!, p.unit, p.terms, weight)],
    ['rescore (blend + sort)', (p) => {
      blended.set(p, rescore(p.set!, p.task, p.unit, p.terms, weight));
    }],
    ['rank + dedup', (p) => rankInSlices(blended.get(p)!, RANKING, recallBudget())],
    ['tier policy + tiers of the page', async (p) => {
      const policy = await tierPolicyFor(deps, DEV_SCOPE, p.set!.stats.docs);
      for (const c of blended.get(p)!.slice(0, INPUT.limit)) {
        decideTier(policy, { queryText: p.task, candidateText: c.task, cosine: c.cosine, centered: c.centered_cosine });
      }
    }],
    ['page read, GET (getMany)', (p) => patterns.getMany(DEV_SCOPE, blended.get(p)!.slice(0, INPUT.limit).map((c) => c.id))],
    ['cosine path: vector search (search())', (p) => patterns.search(DEV_SCOPE, p.unit, k, {}, QUALITY_WINDOW)],
    ['cosine path: search + rank + dedup', async (p) => {
      const hits = await patterns.search(DEV_SCOPE, p.unit, k, {}, QUALITY_WINDOW);
      await rankInSlices(hits.map((h) => ({ id: h.pattern.id, task: h.pattern.task, similarity: h.similarity, recent_evals: h.recent_evals, updated_at: h.pattern.updated_at })), RANKING, recallBudget());
    }],
  ];
  const samples = steps.map(() => [] as number[]);
  const timeBlock = async (s: number, block: Prepared[], work: (p: Prepared) => unknown) => {
    const used = await cpuMicros(async () => {
      for (const p of block) await work(p);
    });
    samples[s].push(used / block.length);
  };
  for (let at = 0; at < prepared.length; at += BLOCK) {
    await timeBlock(0, prepared.slice(at, at + BLOCK), (p) => deps.embedder.embed([`${p.task} (timed)`]));
  }
  for (let round = 0; round < rounds; round++) {
    for (let at = 0; at < prepared.length; at += BLOCK) {
      const block = prepared.slice(at, at + BLOCK);
      for (let s = 1; s < steps.length; s++) await timeBlock(s, block, steps[s][1]);
    }
  }
  return steps.map(([name], s) => [name, median(samples[s])]);
}

export async function runRecallCpuBench(argv: string[]): Promise<void> {
  const o = parse(argv);
  const storage = await STORAGE_FACTORIES.json();
  try {
    process.stderr.write(`recall-cpu: filling ${o.patterns.toLocaleString('en-US')} patterns (json)...\n`);
    await fillStore(storage, o.patterns, o.modelPath, o.seed);
    const depsFor = async (mode: Mode): Promise<ServiceDeps> => {
      const config = loadConfig({
        SERVICE_LOCAL_EMBEDDINGS: 'true', SERVICE_EMBEDDING_MODEL_PATH: o.modelPath, SERVICE_LLM_PROVIDER: 'none', SERVICE_RECALL_RANKING: mode,
      });
      const embedder = await createEmbedder(config, { logger: silentLogger, instruments: noopInstruments });
      return { config: { ...config, storage: { ...config.storage, kind: 'json' } }, storage: storage.storage, embedder, llm: null, clock: systemClock, logger: silentLogger, instruments: noopInstruments, keyStore: null };
    };
    const deps = { hybrid: await depsFor('hybrid'), cosine: await depsFor('cosine') };
    const queries = syntheticQueries(o.seed + 7, WARMUP + o.queries * 5, new Set());
    process.stderr.write('recall-cpu: warming up...\n');
    for (const task of queries.slice(0, WARMUP)) {
      for (const mode of ['hybrid', 'cosine'] as const) await recall(deps[mode], DEV_SCOPE, { task, ...INPUT }, { readonly: true });
    }
    process.stderr.write(`recall-cpu: ${o.queries} recalls per series in ${o.rounds} rounds...\n`);
    const whole = await wholeRecalls(deps, queries.slice(WARMUP, WARMUP + o.queries * 4), o.rounds);
    const phaseRows = await phases(deps.hybrid, queries.slice(WARMUP + o.queries * 4), o.rounds);
    const fmt = (series: Series) => {
      const rounds = whole[series];
      return `${median(rounds).toFixed(0).padStart(6)} µs   per round: ${rounds.map((x) => x.toFixed(0)).join(', ')}`;
    };
    const extra = (kind: Kind) => `${(median(whole[`hybrid ${kind}`]) - median(whole[`cosine ${kind}`])).toFixed(0).padStart(6)} µs`;
    const lines = [
      `Recall per request through the service layer (JSON storage, ${o.patterns.toLocaleString('en-US')} patterns, limit 5, distinct uncached tasks)`,
      `node ${process.version}; ${o.rounds} rounds, hybrid and cosine alternating in blocks of ${BLOCK}; medians of the rounds`,
      '             CPU of the process per recall',
      `POST hybrid  ${fmt('hybrid post')}`,
      `POST cosine  ${fmt('cosine post')}`,
      `POST extra   ${extra('post')}`,
      `GET  hybrid  ${fmt('hybrid get')}`,
      `GET  cosine  ${fmt('cosine get')}`,
      `GET  extra   ${extra('get')}`,
      '',
      `Phases, µs CPU of the process per recall (${o.queries} queries in blocks of ${BLOCK}, ${o.rounds} rounds; median of the blocks):`,
      ...phaseRows.map(([name, us]) => `  ${name.padEnd(46)} ${us.toFixed(1).padStart(8)}`),
    ];
    console.log(lines.join('\n'));
  } finally {
    await storage.close();
    await storage.remove();
  }
}
