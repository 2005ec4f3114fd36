import type { HybridCandidate, HybridCandidateSet, HybridQuery } from '../../../core/hybrid.js';
import type { WorkBudget } from '../../../core/slices.js';
import type { Scope } from '../../../core/types.js';
import { BM25_B, BM25_K1, SELECTIVE_MIN_DOCS, SELECTIVE_SHARE } from '../../../core/bm25.js';
import { iso, scopeWhere, vectorParam } from './rows.js';
import { INDEXED_DIMENSIONS, recentEvalsColumn, type SearchStatement } from './search.js';

const DEFAULT_EF_SEARCH = 40;
/**
 * The keyword side's pruning (keywordParts) enumerates subsets of the query's selective terms:
 * at most 2^MAX_COVER_TERMS of them are looked at, and it is used only when at most MAX_COVERS
 * minimal subsets come out (each is one GIN probe); past either, the plain scan runs.
 */
const MAX_COVER_TERMS = 10;
const MAX_COVERS = 64;
/**
 * A term's upper bound is idf × (k1 + 1) (its BM25 contribution is strictly below that for any
 * tf and length); it is raised by this relative margin so that float rounding in the sums can
 * never make a bound fall below a score it must cover.
 */
const BOUND_MARGIN = 1e-9;

/** Exact BM25 (core/bm25.ts) of the row aliased `alias` over the selective terms `wi`: Σ idf × tf (k1 + 1) / (tf + k1 (1 − b + b · len / avgLen)). */
function bm25Sql(alias: string): string {
  return `(
    SELECT sum(wi.idf * x.tf * ${BM25_K1 + 1} / (x.tf + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * cardinality(${alias}.terms)
      / greatest((SELECT total_terms::float8 / nullif(docs, 0) FROM doc), 1e-9))))
    FROM wi, LATERAL (SELECT cardinality(array_positions(${alias}.terms, wi.term))::float8 AS tf) x WHERE x.tf > 0
  )`;
}

/**
 * The CTEs that end in `keyword`: the `keywordK` best patterns by BM25 among those sharing a
 * selective term, ties by id.
 *
 * Without pruning, every pattern holding any selective term is read and scored: a term in 10%
 * of a million patterns is 100,000 rows per recall. With the nearest rows at hand
 * (`withNearest`), the same top list is found from fewer rows, exactly:
 * - theta = the keywordK-th best BM25 among the nearest rows (they pass the same filter, so
 *   the true keywordK-th best is at least theta, and so is every row of the answer);
 * - a row scoring at least theta holds terms whose upper bounds (ub) sum to at least theta, so
 *   it holds one of the minimal such term sets ("covers": terms taken by falling bound until
 *   the sum reaches theta, so dropping the last, smallest, falls short);
 * - those rows are found by one GIN containment probe per cover (`terms @> cover`, an
 *   intersection of posting lists), then scored and cut exactly as before.
 * With theta 0 (fewer than keywordK nearest rows share a term), more than MAX_COVER_TERMS
 * selective terms or more than MAX_COVERS covers, the plain scan runs instead; both branches
 * are planned, the condition picks one at run time.
 */
function keywordParts(where: string, keywordK: string, withNearest: boolean): string[] {
  const anyTerm = `(SELECT coalesce(array_agg(term), '{}') FROM wi)`;
  const plain = `SELECT p.id, p.terms FROM patterns p WHERE ${where} AND p.terms && ${anyTerm}`;
  const ranked = (source: string) => `keyword AS MATERIALIZED (
  SELECT m.id FROM (${source}) m
  ORDER BY ${bm25Sql('m')} DESC NULLS LAST, m.id
  LIMIT ${keywordK}
)`;
  if (!withNearest) return [ranked(plain)];
  return [
    `theta AS (
  SELECT coalesce((
    SELECT r.s FROM (
      SELECT ${bm25Sql('p')} AS s FROM nearest n JOIN patterns p ON p.tenant_id = $2 AND p.project_id = $3 AND p.id = n.id
    ) r
    WHERE r.s > 0 ORDER BY r.s DESC OFFSET greatest(${keywordK}::bigint - 1, 0) LIMIT 1
  ), 0) AS t
)`,
    `bounds AS (
  SELECT wi.term, wi.idf * ${BM25_K1 + 1} * (1 + ${BOUND_MARGIN}) AS ub, row_number() OVER (ORDER BY wi.idf DESC, wi.term) AS rank FROM wi
)`,
    `cover (need, total, last) AS (
  SELECT ARRAY[b.term], b.ub, b.rank FROM bounds b
  WHERE (SELECT t FROM theta) > 0 AND (SELECT count(*) FROM wi) <= ${MAX_COVER_TERMS}
  UNION ALL
  SELECT c.need || b.term, c.total + b.ub, b.rank FROM cover c JOIN bounds b ON b.rank > c.last
  WHERE c.total < (SELECT t FROM theta)
)`,
    `covers AS MATERIALIZED (SELECT need FROM cover WHERE total >= (SELECT t FROM theta))`,
    `pruned AS (SELECT (SELECT t FROM theta) > 0 AND (SELECT count(*) FROM covers) BETWEEN 1 AND ${MAX_COVERS} AS active)`,
    ranked(`${plain} AND NOT (SELECT active FROM pruned)
    UNION ALL
    SELECT DISTINCT h.id, h.terms FROM covers c CROSS JOIN LATERAL (
      SELECT p.id, p.terms FROM patterns p WHERE ${where} AND p.terms @> c.need
    ) h
    WHERE (SELECT active FROM pruned)`),
  ];
}

export interface HybridRow {
  id: string;
  task: string;
  updated_at: Date;
  cosine: number | null;
  mean_dot: number | null;
  recent_evals?: number[];
  docs: string | null;
  total_terms: string | null;
  df: string[];
  vectors: string | null;
  query_sum_dot: number | null;
  sum_norm2: number | null;
}

/**
 * Hybrid recall's candidates in one statement (docs/behavior.md "Recall" 2): the project's
 * BM25 and vector figures (migration 0007 keeps them), the `vectorK` nearest by the HNSW index
 * (as search.ts does) and the `keywordK` best by BM25 over the query's selective terms among
 * the patterns sharing one of them (GIN index on `terms`), then for their union the exact cosine and the unit
 * vector's dot product with the project's vector sum. The figures repeat on every row.
 * The query vector must be a unit vector (it is dotted with the sum as is).
 */
export function buildHybridStatement(scope: Scope, query: HybridQuery): SearchStatement {
  const unit = query.vector;
  const dim = unit ? unit.length : 0;
  const params: unknown[] = [unit ? vectorParam(unit) : null];
  const where = scopeWhere(scope, query.filter, params);
  params.push(query.terms);
  const terms = `$${params.length}::text[]`;
  params.push(Math.max(0, Math.floor(query.keywordK)));
  const keywordK = `$${params.length}`;
  const parts: string[] = [];
  parts.push(`doc AS (SELECT docs, total_terms FROM recall_doc_stats WHERE tenant_id = $2 AND project_id = $3)`);
  parts.push(`w AS (
  SELECT u.term, u.i, coalesce(t.df, 0)::float8 AS df
  FROM unnest(${terms}) WITH ORDINALITY AS u(term, i)
  LEFT JOIN recall_term_stats t ON t.tenant_id = $2 AND t.project_id = $3 AND t.term = u.term
)`);
  // Only the selective terms find keyword candidates (core/bm25.ts selectiveTerms).
  parts.push(`wi AS (
  SELECT w.term, ln(1 + (greatest(coalesce((SELECT docs FROM doc), 0), w.df) - w.df + 0.5) / (w.df + 0.5)) AS idf FROM w
  WHERE w.df <= greatest(${SELECTIVE_MIN_DOCS}, ${SELECTIVE_SHARE} * coalesce((SELECT docs FROM doc), 0))
)`);
  parts.push(`vs AS (SELECT vector_sum, vectors FROM recall_vector_sums WHERE tenant_id = $2 AND project_id = $3 AND dim = ${dim})`);
  const sources = ['SELECT id FROM keyword'];
  if (unit && query.vectorK > 0) {
    params.push(Math.floor(query.vectorK));
    const order = INDEXED_DIMENSIONS.includes(dim) ? `embedding::halfvec(${dim}) <=> $1::halfvec(${dim})` : 'embedding <=> $1::vector';
    parts.push(`nearest AS MATERIALIZED (
  SELECT id FROM patterns WHERE ${where} AND dim = ${dim} ORDER BY ${order} LIMIT $${params.length}
)`);
    sources.unshift('SELECT id FROM nearest');
  }
  parts.push(...keywordParts(where, keywordK, sources.length > 1));
  parts.push(`ids AS (${sources.join(' UNION ')})`);
  const evals = recentEvalsColumn('p', query.evalWindow, params);
  const vectorColumns = unit
    ? `CASE WHEN p.dim = ${dim} THEN 1 - (p.embedding <=> $1::vector) END AS cosine,
  CASE WHEN p.dim = ${dim} AND vector_norm(p.embedding) > 0 THEN -(l2_normalize(p.embedding) <#> vs.vector_sum) END AS mean_dot,
  -($1::vector <#> vs.vector_sum) AS query_sum_dot`
    : `NULL::float8 AS cosine,
  CASE WHEN vector_norm(p.embedding) > 0 AND vector_dims(p.embedding) = vector_dims(vs.vector_sum)
    THEN -(l2_normalize(p.embedding) <#> vs.vector_sum) END AS mean_dot,
  -($1::vector <#> vs.vector_sum) AS query_sum_dot`; // $1 is NULL here, and so is the dot
  const sql = `WITH RECURSIVE ${parts.join(',\n')}
SELECT p.id, p.task, p.updated_at,
  ${vectorColumns},
  (SELECT docs FROM doc) AS docs, (SELECT total_terms FROM doc) AS total_terms,
  ARRAY(SELECT w.df FROM w ORDER BY w.i) AS df,
  vs.vectors, -(vs.vector_sum <#> vs.vector_sum) AS sum_norm2${evals}
FROM ids JOIN patterns p ON p.tenant_id = $2 AND p.project_id = $3 AND p.id = ids.id
LEFT JOIN vs ON true
ORDER BY p.id`;
  const k = unit ? query.vectorK : 0;
  if (k <= DEFAULT_EF_SEARCH) return { setup: '', sql, params };
  return { setup: `SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = ${Math.min(1000, Math.floor(k))}`, sql, params };
}

/** Rows → candidates (in slices of `budget`) and the project figures (mean dots divided by the vector count here). */
export async function hybridResult(rows: HybridRow[], query: HybridQuery, budget: WorkBudget): Promise<HybridCandidateSet> {
  const first = rows[0];
  const vectors = Number(first?.vectors ?? 0);
  const df = new Map<string, number>();
  query.terms.forEach((t, i) => df.set(t, Number(first?.df?.[i] ?? 0)));
  const perVector = (x: number | null) => (x === null || vectors === 0 ? null : x / vectors);
  const candidates: HybridCandidate[] = await budget.map(rows, (r) => {
    const cosine = Number.isFinite(r.cosine) ? Number(r.cosine) : 0;
    return {
      id: r.id,
      task: r.task,
      similarity: Math.min(1, Math.max(0, cosine)),
      cosine,
      mean_dot: perVector(r.mean_dot),
      recent_evals: r.recent_evals ?? [],
      updated_at: iso(r.updated_at),
    };
  });
  const sumNorm2 = first?.sum_norm2 ?? null;
  return {
    candidates,
    stats: {
      docs: Number(first?.docs ?? 0),
      totalTerms: Number(first?.total_terms ?? 0),
      df,
      vectors,
      query_mean_dot: query.vector ? perVector(first?.query_sum_dot ?? null) : null,
      mean_norm2: sumNorm2 === null || vectors === 0 ? null : sumNorm2 / (vectors * vectors),
    },
  };
}
