import { join, resolve } from 'node:path';
import pg from 'pg';
import { buildHybridStatement } from '../src/adapters/storage/postgres/hybrid-search.js';
import { PATTERN_COLUMNS } from '../src/adapters/storage/postgres/rows.js';
import { buildSearchStatement, SEARCH_SESSION_SQL, type SearchStatement } from '../src/adapters/storage/postgres/search.js';
import { DEFAULT_CODE_WEIGHT, distinctTerms } from '../src/core/bm25.js';
import { firstFetch } from '../src/core/dedup.js';
import { QUALITY_WINDOW } from '../src/core/quality.js';
import { keywordShare } from '../src/services/recall-hybrid.js';
import { repoRoot, UsageError } from './args.js';
import { DEV_SCOPE, openEmbedder } from './http/fill.js';
import { copyFill } from './http/pg-copy.js';
import { openPostgresStorage } from './postgres.js';
import { syntheticQueries, syntheticRuns } from './synthetic.js';
import { corpusOption, corpusTasks, postingShare, type Corpus } from './corpora.js';

/**
 * `npm run bench -- --pg-statements`: what PostgreSQL spends on a default recall's search
 * statement, hybrid ranking against cosine ranking (`SERVICE_RECALL_RANKING=cosine`), on one
 * store filled as the HTTP benchmark fills it. Over HTTP on a shared two-core machine, a
 * build's CPU per request moves by up to half between runs; here one connection sends both
 * statements for each query in turn (their order alternating), so a slow second slows both,
 * and the ratio of the medians is what carries across machines.
 */
const DEFAULTS = { patterns: 10_000, queries: 200, rounds: 5, seed: 42 };
/** A default recall's page (limit 5): the candidate fetch the service makes for it. */
const DEFAULT_LIMIT = 5;

interface Options {
  patterns: number;
  queries: number;
  rounds: number;
  seed: number;
  corpus: Corpus;
  modelPath: string;
}

export const PG_STATEMENTS_USAGE = `usage: npm run bench -- --pg-statements [options]
  --patterns 10000     patterns filled by COPY (real embeddings of 1,000 tasks, noisy copies for the rest)
  --queries 200        recall tasks, each sent as both statements per round
  --rounds 5           rounds (the first only warms and is not counted)
  --corpus templated   task texts: templated or zipfian (see --http --help)
  --seed 42            seed of the synthetic data
  --model PATH         offline embedding model (default: the bundled one)`;

export function parsePgStatementsArgs(argv: string[]): Options {
  const o: Options = { ...DEFAULTS, corpus: 'templated', modelPath: join(repoRoot(), 'models', 'use-lite-static-m2v') };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--pg-statements') continue;
    const value = argv[++i];
    if (flag === '--model') {
      if (!value) throw new UsageError('--model needs a folder');
      o.modelPath = resolve(value);
    } else if (flag === '--corpus') {
      o.corpus = corpusOption(value);
    } else if (flag === '--patterns' || flag === '--queries' || flag === '--rounds' || flag === '--seed') {
      const n = Number(value);
      if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} needs a positive whole number, got "${value ?? ''}"`);
      o[flag.slice(2) as 'patterns' | 'queries' | 'rounds' | 'seed'] = n;
    } else {
      throw new UsageError(`unknown option "${flag}"\n${PG_STATEMENTS_USAGE}`);
    }
  }
  if (o.rounds < 2) throw new UsageError('--rounds must be at least 2 (the first only warms)');
  return o;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export async function runPgStatementsBench(argv: string[]): Promise<void> {
  const o = parsePgStatementsArgs(argv);
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const tasks = corpusTasks(o.corpus);
  const store = await openPostgresStorage();
  const url = store.serverEnv.SERVICE_DATABASE_URL;
  try {
    await store.close();
    log(`filling ${o.patterns.toLocaleString('en-US')} patterns (${o.corpus} corpus) by COPY...`);
    await copyFill(url, o.patterns, o.modelPath, o.seed, log, tasks);
    const queries = syntheticQueries(o.seed + 11, o.queries, new Set(), tasks);
    const share = postingShare(syntheticRuns(o.seed, o.patterns, tasks).map((r) => r.task), queries);
    const embedder = await openEmbedder(o.modelPath);
    const vectors = await embedder.embed(queries);
    await embedder.close();
    const k = firstFetch(DEFAULT_LIMIT);
    const statements: Record<'cosine' | 'hybrid', (i: number) => SearchStatement> = {
      cosine: (i) => buildSearchStatement(DEV_SCOPE, vectors[i], k, {}, { columns: PATTERN_COLUMNS, evalWindow: QUALITY_WINDOW }),
      hybrid: (i) => buildHybridStatement(DEV_SCOPE, {
        vector: vectors[i], terms: distinctTerms(queries[i]), vectorK: k, keywordK: keywordShare(k), filter: {}, evalWindow: QUALITY_WINDOW,
        codeWeight: DEFAULT_CODE_WEIGHT,
      }),
    };
    const names = ['cosine', 'hybrid'] as const;
    const times: Record<(typeof names)[number], number[]> = { cosine: [], hybrid: [] };
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(SEARCH_SESSION_SQL);
      for (let round = 0; round < o.rounds; round++) {
        log(`round ${round + 1} of ${o.rounds}${round === 0 ? ' (warm-up)' : ''}`);
        for (let i = 0; i < queries.length; i++) {
          for (const name of (round + i) % 2 === 0 ? names : [...names].reverse()) {
            const stmt = statements[name](i);
            // Named by text, as the service names its statements (db.ts): each is prepared once per connection.
            const started = performance.now();
            await client.query({ name: `${name}_${stmt.sql.length}`, text: stmt.sql, values: stmt.params });
            if (round > 0) times[name].push(performance.now() - started);
          }
        }
      }
    } finally {
      await client.end();
    }
    const cosine = median(times.cosine);
    const hybrid = median(times.hybrid);
    console.log([
      'PostgreSQL: a default recall\'s search statement, round trip on one connection (interleaved per query)',
      `${o.patterns.toLocaleString('en-US')} patterns, ${o.corpus} corpus (posting share ${share.toFixed(2)}), ${o.queries} queries x ${o.rounds - 1} rounds, vector k ${k}, keyword k ${keywordShare(k)}`,
      `cosine ranking  median ${cosine.toFixed(3)} ms`,
      `hybrid ranking  median ${hybrid.toFixed(3)} ms`,
      `hybrid / cosine ${(hybrid / cosine).toFixed(2)}; hybrid - cosine ${(hybrid - cosine).toFixed(3)} ms`,
    ].join('\n'));
  } finally {
    await store.remove();
  }
}
