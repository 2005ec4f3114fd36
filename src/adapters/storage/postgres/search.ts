import type { PatternFilter, Scope } from '../../../core/types.js';
import { PATTERN_COLUMNS, scopeWhere, vectorParam } from './rows.js';

/** Dimensions with a partial HNSW index (migrations/0001_init.up.sql). Others still work, unindexed. */
export const INDEXED_DIMENSIONS: readonly number[] = [384, 1536];

export interface SearchStatement {
  /** Transaction-local planner settings, sent with BEGIN. */
  setup: string;
  sql: string;
  params: unknown[];
}

/**
 * The nearest-neighbour query for one scope and filter.
 *
 * - The HNSW indexes are partial expression indexes, one per dimension; the planner only
 *   considers one when the query repeats its expression (`embedding::vector(N)`) and its
 *   predicate (`dim = N`) literally, so N is spliced into the SQL (it is a validated integer).
 * - Scope and filters sit in the same WHERE as the ORDER BY distance. With
 *   `hnsw.iterative_scan = relaxed_order` (pgvector 0.8) the index scan keeps walking the
 *   graph until LIMIT rows pass the filter, instead of returning only the first ef_search
 *   candidates and leaving the filter to empty them.
 * - relaxed_order may return rows slightly out of order; the outer query re-sorts the
 *   materialised candidates exactly (the pattern pgvector documents), with id as tie-break.
 */
export function buildSearchStatement(scope: Scope, vector: Float32Array, k: number, filter?: PatternFilter): SearchStatement {
  const dim = vector.length;
  if (!Number.isInteger(dim) || dim < 1) throw new Error('search vector must not be empty');
  const params: unknown[] = [vectorParam(vector)];
  const typed = INDEXED_DIMENSIONS.includes(dim);
  const column = typed ? `embedding::vector(${dim})` : 'embedding';
  const probe = typed ? `$1::vector(${dim})` : '$1::vector';
  const where = scopeWhere(scope, filter, params);
  params.push(k);
  const sql = `WITH nearest AS MATERIALIZED (
  SELECT ${PATTERN_COLUMNS}, (${column} <=> ${probe}) AS distance
  FROM patterns
  WHERE ${where} AND dim = ${dim}
  ORDER BY ${column} <=> ${probe}
  LIMIT $${params.length}
)
SELECT * FROM nearest ORDER BY distance, id`;
  // ef_search bounds the candidate list of each scan step; it must be at least k to return
  // k rows in one step (pgvector caps it at 1000).
  const efSearch = Math.min(1000, Math.max(40, k));
  return { setup: `SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = ${efSearch}`, sql, params };
}

/** Cosine distance → similarity clamped to [0, 1] (NaN, from a zero vector, counts as 0). */
export function distanceToSimilarity(distance: number): number {
  const s = 1 - distance;
  if (!Number.isFinite(s)) return 0;
  return Math.min(1, Math.max(0, s));
}
