import type { PatternFilter, Scope } from '../../../core/types.js';
import { PATTERN_COLUMNS, scopeWhere, vectorParam } from './rows.js';

/** Dimensions with a partial HNSW index (migrations 0001, 0003). Others still work, unindexed. */
export const INDEXED_DIMENSIONS: readonly number[] = [384, 1536];

/**
 * Run by every connection of the storage's pool (session level): iterative index scans
 * (pgvector 0.8), so a filtered search keeps walking the graph until LIMIT rows pass the
 * filter. The service holds its connections for LISTEN and advisory locks already, so it needs
 * session pooling anyway; a search with no setup of its own is then one round trip.
 */
export const SEARCH_SESSION_SQL = 'SET hnsw.iterative_scan = relaxed_order';
/** pgvector's default candidate list; searches for more rows widen it for their transaction. */
export const DEFAULT_EF_SEARCH = 40;

export interface SearchStatement {
  /** Transaction-local planner settings, sent with BEGIN ('' when the session's suffice). */
  setup: string;
  sql: string;
  params: unknown[];
}

export interface SearchShape {
  /** Columns selected from patterns (PATTERN_COLUMNS for whole records). */
  columns: string;
  /** Also return each hit's newest `evalWindow` eval scores as `recent_evals` (0: don't). */
  evalWindow: number;
}

const WHOLE_RECORDS: SearchShape = { columns: PATTERN_COLUMNS, evalWindow: 0 };

/**
 * `, … AS recent_evals`: the newest `window` eval scores of the row aliased `alias` (scope in
 * $2/$3), comma-separated (read with rows.ts scoresFromText), its limit pushed onto `params`;
 * '' when no window is asked for.
 */
export function recentEvalsColumn(alias: string, window: number, params: unknown[]): string {
  if (!(window > 0)) return '';
  return recentEvalsSql(alias, params.push(Math.floor(window)));
}

/** recentEvalsColumn's text, the limit in parameter `$limitIndex`. */
export function recentEvalsSql(alias: string, limitIndex: number): string {
  // patterns.id is COLLATE "C"; the observation index uses the default collation, and only
  // a comparison in that collation can probe it.
  // One text, not a float8[]: node-postgres parses an array character by character, which
  // cost about 2 µs a row (0.06 ms of a hybrid recall's 30 candidates); float8's text is the
  // shortest that reads back exactly, in an array or not.
  return `, array_to_string(ARRAY(
    SELECT e.score FROM eval_observations e
    WHERE e.tenant_id = $2 AND e.project_id = $3 AND e.pattern_id = (${alias}.id COLLATE "default")
    ORDER BY e.at DESC, e.id DESC LIMIT $${limitIndex}
  ), ',') AS recent_evals`;
}

/**
 * The nearest-neighbour query for one scope and filter.
 *
 * - The HNSW indexes are partial expression indexes over half-precision copies, one per
 *   dimension; the planner only considers one when the query repeats its expression
 *   (`embedding::halfvec(N)`) and its predicate (`dim = N`) literally, so N is spliced into
 *   the SQL (it is a validated integer).
 * - The index orders by half-precision distance; the distance returned is recomputed from the
 *   full-precision column for the k rows found, so similarities are exact.
 * - Scope and filters sit in the same WHERE as the ORDER BY distance. With
 *   `hnsw.iterative_scan = relaxed_order` (pgvector 0.8) the index scan keeps walking the
 *   graph until LIMIT rows pass the filter, instead of returning only the first ef_search
 *   candidates and leaving the filter to empty them.
 * - relaxed_order may return rows slightly out of order; the outer query re-sorts the
 *   materialised candidates exactly (the pattern pgvector documents), with id as tie-break.
 * - With an eval window, each hit's newest observations come along as an array (one index
 *   probe per hit, LIMIT n each), sparing recall a second round trip.
 */
export function buildSearchStatement(
  scope: Scope,
  vector: Float32Array,
  k: number,
  filter?: PatternFilter,
  shape: SearchShape = WHOLE_RECORDS,
): SearchStatement {
  const dim = vector.length;
  if (!Number.isInteger(dim) || dim < 1) throw new Error('search vector must not be empty');
  const params: unknown[] = [vectorParam(vector)];
  const indexed = INDEXED_DIMENSIONS.includes(dim);
  // Unindexed, the scan is exact and equal distances go to the smaller id at the LIMIT too (the
  // storages' one tie rule); an HNSW walk is approximate, ties at its LIMIT included.
  const order = indexed ? `embedding::halfvec(${dim}) <=> $1::halfvec(${dim})` : 'embedding <=> $1::vector, id';
  const where = scopeWhere(scope, filter, params);
  // k is written into the text, not bound (as in hybrid-search.ts): bound, the generic plan's
  // guess at the LIMIT made it look worse than the custom ones, so PostgreSQL planned every
  // execution afresh (pg_prepared_statements: 60 custom plans in 60 calls, for learn's
  // near-duplicate check and cosine-ranked recall alike; 0.10-0.12 ms a statement at 10k).
  // As a literal, PostgreSQL keeps the generic plan unless the scope's own statistics make the
  // value-specific plans look cheaper (tenants of very different sizes). k takes a handful of values.
  if (!Number.isInteger(k) || k < 0) throw new Error('search k must be a whole number');
  const limit = String(k);
  const evals = recentEvalsColumn('n', shape.evalWindow, params);
  const sql = `WITH nearest AS MATERIALIZED (
  SELECT ${shape.columns}, (embedding <=> $1::vector) AS distance
  FROM patterns
  WHERE ${where} AND dim = ${dim}
  ORDER BY ${order}
  LIMIT ${limit}
)
SELECT n.*${evals} FROM nearest n ORDER BY n.distance, n.id`;
  // ef_search bounds the candidate list of each scan step: a wider search gets one at least k
  // long, so k rows come from the first step (pgvector caps it at 1000). It repeats the
  // session's iterative-scan setting, so that a wide search never depends on it.
  if (k <= DEFAULT_EF_SEARCH) return { setup: '', sql, params };
  const efSearch = Math.min(1000, k);
  return { setup: `SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = ${efSearch}`, sql, params };
}

/** Cosine distance → similarity clamped to [0, 1] (NaN, from a zero vector, counts as 0). */
export function distanceToSimilarity(distance: number): number {
  const s = 1 - distance;
  if (!Number.isFinite(s)) return 0;
  return Math.min(1, Math.max(0, s));
}
