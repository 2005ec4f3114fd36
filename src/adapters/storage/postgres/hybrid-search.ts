import type { HybridCandidate, HybridCandidateSet, HybridQuery } from '../../../core/hybrid.js';
import type { WorkBudget } from '../../../core/slices.js';
import { hasFilter, type Scope } from '../../../core/types.js';
import { BM25_B, BM25_K1, SELECTIVE_MAX_DOCS, SELECTIVE_MIN_DOCS, SELECTIVE_SHARE } from '../../../core/bm25.js';
import { scopeWhere, scoresFromText, vectorParam } from './rows.js';
import { DEFAULT_EF_SEARCH, INDEXED_DIMENSIONS, recentEvalsSql, type SearchStatement } from './search.js';

/**
 * A float8 SQL literal. A bare `0.75` is numeric in PostgreSQL, and numeric arithmetic on every
 * posting row cost about a quarter of the keyword side's time.
 */
function float8(x: number): string {
  return `${x}::float8`;
}

/**
 * The CTE `keyword`: the `keywordK` best patterns by BM25 (core/bm25.ts: Σ idf × tf (k1 + 1) /
 * (tf + k1 (1 − b + b · len / avgLen))) over the query's selective terms `wi`, among the
 * patterns holding one of them; ties by id.
 *
 * It reads recall_postings (migration 0008), never the patterns: the posting rows of the
 * selective terms through the primary key (tf and len are in the index), one sum per pattern.
 * The lookup is one index range per term: LATERAL with OFFSET 0 (so the planner cannot pull
 * it up into a join it might plan as one scan of all the project's postings, as it does when
 * the table was just filled and looks empty to it), in the column's "C" collation (without
 * it the index cannot serve the term).
 * The work is the number of posting rows of those terms, which the selective-term rule bounds
 * at a share of the project per term. With a filter (classification, source, scores, dates)
 * the best sums are checked against the pattern rows, best first, until keywordK pass.
 */
function keywordPart(where: string, filtered: boolean, keywordK: string, codeWeight: number): string {
  const postings = (columns: string, field: string) =>
    `SELECT ${columns} FROM recall_postings WHERE tenant_id = $2 AND project_id = $3 AND term = wi.term COLLATE "C"${field}`;
  // Without the code field: the task's postings alone, one row per pattern (BM25 as before).
  const taskOnly = `SELECT r.pattern_id AS id, sum(wi.weight * r.tf / (r.tf + ${float8(BM25_K1 * (1 - BM25_B))} + wi.per_len * r.len)) AS s
    FROM wi CROSS JOIN LATERAL (
      ${postings('pattern_id, tf, len', ' AND field = 0')} OFFSET 0
    ) r
    GROUP BY r.pattern_id`;
  // BM25F (core/bm25.ts fieldTermScore): a pattern's two rows for the term (task, code) side by
  // side, read in the index's order. Without the term in its code a pattern scores exactly as
  // above; with it, the fields' normalised frequencies are summed (the code's weighted) and
  // saturated once: weight x / (x + k1), x = tf / (1 − b + b len / avgLen) + w ctf / (1 − b + b clen / avgCodeLen).
  const withCode = `SELECT r.pattern_id AS id, sum(CASE
      WHEN r.ctf IS NULL THEN wi.weight * r.tf / (r.tf + ${float8(BM25_K1 * (1 - BM25_B))} + wi.per_len * r.len)
      ELSE wi.weight * r.x / (r.x + ${float8(BM25_K1)}) END) AS s
    FROM wi CROSS JOIN LATERAL (
      SELECT f.pattern_id, f.tf, f.len, f.ctf,
        coalesce(f.tf / (${float8(1 - BM25_B)} + wi.b_len * f.len), 0)
          + ${float8(codeWeight)} * (f.ctf / (${float8(1 - BM25_B)} + wi.b_code_len * f.clen)) AS x
      FROM (
        SELECT pattern_id, max(tf) FILTER (WHERE field = 0) AS tf, max(len) FILTER (WHERE field = 0) AS len,
          max(tf) FILTER (WHERE field = 1) AS ctf, max(len) FILTER (WHERE field = 1) AS clen
        FROM (${postings('pattern_id, field, tf, len', '')} OFFSET 0) t
        GROUP BY pattern_id
      ) f
    ) r
    GROUP BY r.pattern_id`;
  const sums = codeWeight > 0 ? withCode : taskOnly;
  const passes = filtered ? `WHERE EXISTS (SELECT 1 FROM patterns WHERE ${where} AND id = k.id)` : '';
  return `keyword AS MATERIALIZED (
  SELECT k.id FROM (${sums}) k ${passes}
  ORDER BY k.s DESC, k.id
  LIMIT ${keywordK}
)`;
}

/**
 * A candidate's updated_at as the text the service uses (Date.toISOString's form, the
 * milliseconds truncated as a Date truncates them): node-postgres would parse the timestamp
 * into a Date for it to be written back out as text, some 2 µs a row (3 % of a GET recall's
 * server CPU over 30 candidates).
 */
const ISO_UPDATED_AT = `to_char(c.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at`;

export interface HybridRow {
  id: string;
  task: string;
  /** ISO 8601 in UTC to the millisecond, as Date.toISOString writes it (ISO_UPDATED_AT). */
  updated_at: string;
  cosine: number | null;
  mean_dot: number | null;
  /** search.ts recentEvalsSql's text (absent without an eval window). */
  recent_evals?: string | null;
  /** The code's terms, space-separated (patterns.code_terms, migration 0013). */
  code_terms: string | null;
  docs: string | null;
  total_terms: string | null;
  total_code_terms: string | null;
  /** The query terms' document frequencies in term order, comma-separated (null without terms). */
  df: string | null;
  vectors: string | null;
  query_sum_dot: number | null;
  sum_norm2: number | null;
  /** dir0, dir1, …: the row's unit vector · each direction; sum_dir0, …: the vector sum's (with query.directions only). */
  [direction: `dir${number}` | `sum_dir${number}`]: number | null;
}

/**
 * Hybrid recall's candidates in one statement (docs/behavior.md "Recall" 2): the project's
 * BM25 and vector figures (migration 0007 keeps them), the `vectorK` nearest by the HNSW index
 * (as search.ts does) and the `keywordK` best by BM25 over the query's selective terms among
 * the patterns sharing one of them (recall_postings), then for their union the exact cosine and the unit
 * vector's dot product with the project's vector sum. The figures repeat on every row; the
 * terms' document frequencies come as one text, not an array: node-postgres parses an array
 * on every row, and only the first row's is read (0.05 ms of a 1.6 ms statement at 10k).
 * The query vector must be a unit vector (it is dotted with the sum as is).
 */
export function buildHybridStatement(scope: Scope, query: HybridQuery): SearchStatement {
  const unit = query.vector;
  const params: unknown[] = [unit ? vectorParam(unit) : null];
  const where = scopeWhere(scope, query.filter, params);
  const termsIndex = params.push(query.terms);
  const evalsIndex = query.evalWindow > 0 ? params.push(Math.floor(query.evalWindow)) : 0;
  // The principal directions ranking removes (core/components.ts), one parameter each.
  const directionIndexes = unit ? (query.directions ?? []).filter((u) => u.length === unit.length).map((u) => params.push(vectorParam(u))) : [];
  const vectorK = unit ? Math.max(0, Math.floor(query.vectorK)) : 0;
  const shape: HybridShape = {
    where, filtered: hasFilter(query.filter), dim: unit ? unit.length : 0, hasVector: unit !== null,
    vectorK, keywordK: Math.max(0, Math.floor(query.keywordK)), termsIndex, evalsIndex, codeWeight: query.codeWeight ?? 0, directionIndexes,
  };
  const sql = hybridSql(shape);
  if (vectorK <= DEFAULT_EF_SEARCH) return { setup: '', sql, params };
  return { setup: `SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = ${Math.min(1000, vectorK)}`, sql, params };
}

/** What the statement's text depends on; the values themselves are parameters. */
interface HybridShape {
  /** scopeWhere's text (parameter numbers included). */
  where: string;
  filtered: boolean;
  dim: number;
  hasVector: boolean;
  vectorK: number;
  keywordK: number;
  /** Parameter numbers of the query terms and of the eval window's limit (0: no evals). */
  termsIndex: number;
  evalsIndex: number;
  /** The code field's weight (0: task postings alone). */
  codeWeight: number;
  /** Parameter numbers of the principal directions (none: no removal). */
  directionIndexes: number[];
}

/**
 * Texts already built, by shape. A recall's statement comes in a handful of shapes, and the
 * same string each time costs the prepared-statement lookup (db.ts, by text) one hash of a
 * string whose hash V8 has kept: building the 2.5 kB text afresh and hashing it cost about
 * 20 µs a recall. Bounded: cleared when full (a filter's value is a parameter, not a shape).
 */
const HYBRID_SQL = new Map<string, string>();
const HYBRID_SQL_MAX = 256;

function hybridSql(shape: HybridShape): string {
  const key = `${shape.where}\u0000${shape.filtered}\u0000${shape.dim}\u0000${shape.hasVector}\u0000${shape.vectorK}\u0000${shape.keywordK}\u0000${shape.termsIndex}\u0000${shape.evalsIndex}\u0000${shape.codeWeight}\u0000${shape.directionIndexes.join(',')}`;
  let sql = HYBRID_SQL.get(key);
  if (sql === undefined) {
    if (HYBRID_SQL.size >= HYBRID_SQL_MAX) HYBRID_SQL.clear();
    sql = buildHybridSql(shape);
    HYBRID_SQL.set(key, sql);
  }
  return sql;
}

function buildHybridSql({
  where, filtered, dim, hasVector, vectorK, keywordK: k, termsIndex, evalsIndex, codeWeight, directionIndexes,
}: HybridShape): string {
  const terms = `$${termsIndex}::text[]`;
  // The two limits are written into the text, not bound: with them as parameters a generic
  // plan guesses a tenth of the table for `nearest` and joins it by a scan of the project's
  // patterns, so PostgreSQL kept planning every execution afresh (custom plans, about 0.4 ms
  // each). With literals the generic plan is the custom one, and after five executions
  // PostgreSQL reuses it. Each k is a separate prepared statement (db.ts names them by text);
  // k takes a handful of values (core/dedup.ts firstFetch and widenedFetch).
  const keywordK = String(k);
  const parts: string[] = [];
  parts.push(`doc AS (SELECT docs, total_terms, total_code_terms FROM recall_doc_stats WHERE tenant_id = $2 AND project_id = $3)`);
  // One primary-key lookup per query term (a join may be planned as a read of the project's
  // whole vocabulary); "C" is the column's collation, which the index needs.
  parts.push(`w AS (
  SELECT u.term, u.i, coalesce((
    SELECT t.df FROM recall_term_stats t WHERE t.tenant_id = $2 AND t.project_id = $3 AND t.term = u.term COLLATE "C"
  ), 0)::float8 AS df
  FROM unnest(${terms}) WITH ORDINALITY AS u(term, i)
)`);
  // Only the selective terms find keyword candidates (core/bm25.ts selectiveTerms, selectiveDocCap).
  // Materialized: each term's idf is computed once, not once per posting row the keyword side sums.
  // Per term, the factors of its BM25 contribution that do not depend on the posting
  // (core/bm25.ts termScore rearranged): weight = idf (k1 + 1), per_len = k1 b / avgLen, so a
  // posting row costs idf-free float8 arithmetic: weight tf / (tf + k1 (1 − b) + per_len len).
  parts.push(`wi AS MATERIALIZED (
  SELECT w.term,
    ${float8(BM25_K1 + 1)} * ln(1 + (greatest(coalesce((SELECT docs FROM doc), 0), w.df) - w.df + 0.5) / (w.df + 0.5)) AS weight,
    ${float8(BM25_K1 * BM25_B)} / (SELECT greatest(total_terms::float8 / nullif(docs, 0), 1e-9) FROM doc) AS per_len,
    ${float8(BM25_B)} / (SELECT greatest(total_terms::float8 / nullif(docs, 0), 1e-9) FROM doc) AS b_len,
    ${float8(BM25_B)} / (SELECT greatest(total_code_terms::float8 / nullif(docs, 0), 1e-9) FROM doc) AS b_code_len
  FROM w
  WHERE w.df <= greatest(${SELECTIVE_MIN_DOCS}, least(${SELECTIVE_SHARE} * coalesce((SELECT docs FROM doc), 0), ${SELECTIVE_MAX_DOCS}))
)`);
  // The query's figures against the project's vector sum, once per statement. This is also the
  // statement's first use of $1, which gives the parameter its type: had `nearest`'s
  // `$1::halfvec` come first, $1 would be a halfvec, and every cosine below would be taken
  // against a query rounded to half precision (errors up to 7e-5 at 384 dimensions).
  parts.push(`vs AS (
  SELECT vector_sum, vectors, -($1::vector <#> vector_sum) AS query_sum_dot, -(vector_sum <#> vector_sum) AS sum_norm2
  FROM recall_vector_sums WHERE tenant_id = $2 AND project_id = $3 AND dim = ${dim}
)`);
  // The nearest patterns come with the columns the answer needs, read by the index walk
  // itself; only keyword candidates the walk did not find are looked up by id. (Joining the
  // union of ids back to the table read every nearest row twice: 2.5–3.5 % of the statement.)
  const rowColumns = (alias: string) => `${alias}.id, ${alias}.task, ${alias}.code_terms, ${alias}.updated_at, ${alias}.dim, ${alias}.embedding`;
  const keywordRows = `SELECT ${rowColumns('p')} FROM keyword k JOIN patterns p ON p.tenant_id = $2 AND p.project_id = $3 AND p.id = k.id`;
  let candidates = keywordRows;
  if (hasVector && vectorK > 0) {
    // As in search.ts: unindexed (exact), equal distances go to the smaller id at the LIMIT.
    const order = INDEXED_DIMENSIONS.includes(dim) ? `embedding::halfvec(${dim}) <=> $1::halfvec(${dim})` : 'embedding <=> $1::vector, id';
    parts.push(`nearest AS MATERIALIZED (
  SELECT id, task, code_terms, updated_at, dim, embedding FROM patterns WHERE ${where} AND dim = ${dim} ORDER BY ${order} LIMIT ${vectorK}
)`);
    candidates = `SELECT ${rowColumns('n')} FROM nearest n
  UNION ALL
  ${keywordRows} WHERE NOT EXISTS (SELECT 1 FROM nearest n WHERE n.id = k.id)`;
  }
  parts.push(keywordPart(where, filtered, keywordK, codeWeight));
  parts.push(`c AS (
  ${candidates}
)`);
  const evals = evalsIndex > 0 ? recentEvalsSql('c', evalsIndex) : '';
  // Both figures divide a dot product by the row's norm (the query is a unit vector): no
  // normalised copy of the row is built (l2_normalize), and no norm of the query taken (<=>),
  // 0.06 ms of a 1.5 ms statement at 10k. A zero row gives NULL, which reads as no cosine.
  const vectorColumns = hasVector
    ? `CASE WHEN c.dim = ${dim} THEN -(c.embedding <#> $1::vector) / nullif(vector_norm(c.embedding), 0) END AS cosine,
  CASE WHEN c.dim = ${dim} THEN -(c.embedding <#> vs.vector_sum) / nullif(vector_norm(c.embedding), 0) END AS mean_dot`
    : `NULL::float8 AS cosine,
  CASE WHEN vector_dims(c.embedding) = vector_dims(vs.vector_sum)
    THEN -(c.embedding <#> vs.vector_sum) / nullif(vector_norm(c.embedding), 0) END AS mean_dot`;
  // Each candidate's and the vector sum's dot with each direction (the sum's divided by the count in hybridResult).
  const directionColumns = directionIndexes.map((index, i) => `,
  CASE WHEN c.dim = ${dim} THEN -(c.embedding <#> $${index}::vector) / nullif(vector_norm(c.embedding), 0) END AS dir${i},
  -(vs.vector_sum <#> $${index}::vector) AS sum_dir${i}`).join('');
  const sql = `WITH ${parts.join(',\n')}
SELECT c.id, c.task, array_to_string(c.code_terms, ' ') AS code_terms, ${ISO_UPDATED_AT},
  ${vectorColumns},
  (SELECT docs FROM doc) AS docs, (SELECT total_terms FROM doc) AS total_terms, (SELECT total_code_terms FROM doc) AS total_code_terms,
  (SELECT string_agg(w.df::bigint::text, ',' ORDER BY w.i) FROM w) AS df,
  vs.query_sum_dot, vs.vectors, vs.sum_norm2${directionColumns}${evals}
FROM c
LEFT JOIN vs ON true
ORDER BY c.id`;
  return sql;
}

/** Rows → candidates (in slices of `budget`) and the project figures (mean dots divided by the vector count here). */
export async function hybridResult(rows: HybridRow[], query: HybridQuery, budget: WorkBudget): Promise<HybridCandidateSet> {
  const first = rows[0];
  const vectors = Number(first?.vectors ?? 0);
  const df = new Map<string, number>();
  const dfs = first?.df ? first.df.split(',') : [];
  query.terms.forEach((t, i) => df.set(t, Number(dfs[i] ?? 0)));
  const perVector = (x: number | null) => (x === null || vectors === 0 ? null : x / vectors);
  const directions = query.vector ? (query.directions ?? []).filter((u) => u.length === query.vector!.length).length : 0;
  const directionDots = (r: HybridRow, prefix: 'dir' | 'sum_dir'): (number | null)[] =>
    Array.from({ length: directions }, (_, i) => r[`${prefix}${i}`] ?? null);
  const meanDirections = first && directions > 0 ? directionDots(first, 'sum_dir').map(perVector) : [];
  const candidates: HybridCandidate[] = await budget.map(rows, (r) => {
    const cosine = Number.isFinite(r.cosine) ? Number(r.cosine) : 0;
    return {
      id: r.id,
      task: r.task,
      similarity: Math.min(1, Math.max(0, cosine)),
      cosine,
      mean_dot: perVector(r.mean_dot),
      code_terms: r.code_terms ?? '',
      direction_dots: directions > 0 && r.dir0 !== null && r.dir0 !== undefined ? directionDots(r, 'dir').map(Number) : null,
      recent_evals: scoresFromText(r.recent_evals),
      updated_at: r.updated_at,
    };
  });
  const sumNorm2 = first?.sum_norm2 ?? null;
  return {
    candidates,
    stats: {
      docs: Number(first?.docs ?? 0),
      totalTerms: Number(first?.total_terms ?? 0),
      totalCodeTerms: Number(first?.total_code_terms ?? 0),
      df,
      vectors,
      query_mean_dot: query.vector ? perVector(first?.query_sum_dot ?? null) : null,
      mean_norm2: sumNorm2 === null || vectors === 0 ? null : sumNorm2 / (vectors * vectors),
      mean_direction_dots: meanDirections.length > 0 && meanDirections.every((x) => x !== null) ? (meanDirections as number[]) : null,
    },
  };
}
