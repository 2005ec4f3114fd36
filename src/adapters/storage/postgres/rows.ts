import pgvector from 'pgvector';
import type { Classification, PatternFilter, PatternRecord, Scope, Source } from '../../../core/types.js';

/** Pattern columns in record order (never the embedding: it is for search only). */
export const PATTERN_COLUMNS =
  'id, task, code, output, eval_score, success_score, reuse_count, run_id, classification, source, ' +
  'author, expires_at, redacted, created_at, updated_at, last_aged_at';

/**
 * updated_at at the precision the service keeps and answers (milliseconds, see
 * normalizedTimestamp; pg reads a timestamptz into a Date, which cuts the microseconds the
 * same way). Listing, its cursor and the update-time filters compare this, never the raw
 * column: a row stored with microseconds (an import before input times were normalised) would
 * otherwise fall between a millisecond cursor and the next page and never be listed.
 */
export const UPDATED_AT_MS = "date_trunc('milliseconds', updated_at)";

/** A patterns row as pg returns it: the record's fields, with timestamps as Date and enums as text. */
export type PatternRow = Omit<PatternRecord, 'classification' | 'source' | 'expires_at' | 'created_at' | 'updated_at' | 'last_aged_at'> & {
  classification: string;
  source: string;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  last_aged_at: Date | null;
};

export function iso(d: Date): string;
export function iso(d: Date | null): string | null;
export function iso(d: Date | null): string | null {
  return d === null ? null : d.toISOString();
}

/** search.ts recentEvalsSql's comma-separated scores ('' or null: none) as numbers, newest first. */
export function scoresFromText(text: string | null | undefined): number[] {
  if (!text) return [];
  const parts = text.split(',');
  const out = new Array<number>(parts.length);
  for (let i = 0; i < parts.length; i++) out[i] = Number(parts[i]);
  return out;
}

export function rowToPattern(r: PatternRow): PatternRecord {
  return {
    id: r.id,
    task: r.task,
    code: r.code,
    output: r.output,
    eval_score: r.eval_score,
    success_score: r.success_score,
    reuse_count: r.reuse_count,
    run_id: r.run_id,
    classification: r.classification as Classification,
    source: r.source as Source,
    author: r.author,
    expires_at: iso(r.expires_at),
    redacted: r.redacted,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    last_aged_at: iso(r.last_aged_at),
  };
}

/** The record's values in PATTERN_COLUMNS order (after id). */
export function patternValues(p: PatternRecord): unknown[] {
  return [
    p.task, p.code, p.output, p.eval_score, p.success_score, p.reuse_count, p.run_id, p.classification,
    p.source, p.author, p.expires_at, p.redacted, p.created_at, p.updated_at, p.last_aged_at,
  ];
}

/** pgvector's limit on a vector's dimensions (its binary form counts them in an int16). */
const MAX_DIMENSIONS = 16_000;

/**
 * A vector parameter in pgvector's binary form (vector_recv: int16 dimensions, int16 zero, then
 * each float4, big-endian); node-postgres sends a Buffer as a binary parameter. Every statement
 * casts it `::vector` at its first use, which types the parameter. The text form cost about
 * 80 µs to write at 384 dimensions (a string per float, then a join) and PostgreSQL parsed every
 * float back; this costs about 5 µs and carries the same float4 values.
 * Rejects NaN/Infinity, which PostgreSQL would refuse less clearly.
 */
export function vectorParam(v: Float32Array): Buffer {
  if (v.length === 0) throw new Error('cannot store an empty vector');
  if (v.length > MAX_DIMENSIONS) throw new Error(`a vector has at most ${MAX_DIMENSIONS} dimensions`);
  const out = Buffer.allocUnsafe(4 + 4 * v.length);
  out.writeInt16BE(v.length, 0);
  out.writeInt16BE(0, 2);
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (!Number.isFinite(x)) throw new Error('vector contains a non-finite value');
    out.writeFloatBE(x, 4 + 4 * i);
  }
  return out;
}

/** pgvector's text form (how a vector column is read) back into floats. */
export function parseVector(text: string): Float32Array {
  const trimmed = text.trim();
  return trimmed === '[]' ? new Float32Array(0) : Float32Array.from(pgvector.fromSql(trimmed) as number[]);
}

/**
 * Appends the scope and filter predicates to `params` and returns the WHERE body. Filters are
 * part of the same statement as the search or listing, so they restrict it, never its result.
 */
export function scopeWhere(scope: Scope, filter: PatternFilter | undefined, params: unknown[]): string {
  params.push(scope.tenant_id, scope.project_id);
  const parts = [`tenant_id = $${params.length - 1}`, `project_id = $${params.length}`];
  if (filter?.classification !== undefined) {
    params.push(filter.classification);
    parts.push(`classification = $${params.length}`);
  }
  if (filter?.classifications !== undefined) {
    params.push(filter.classifications);
    parts.push(`classification = ANY($${params.length}::text[])`);
  }
  if (filter?.source !== undefined) {
    params.push(filter.source);
    parts.push(`source = $${params.length}`);
  }
  if (filter?.min_score !== undefined) {
    params.push(filter.min_score);
    parts.push(`success_score >= $${params.length}`);
  }
  if (filter?.max_score !== undefined) {
    params.push(filter.max_score);
    parts.push(`success_score <= $${params.length}`);
  }
  if (filter?.updated_after !== undefined) {
    params.push(filter.updated_after);
    parts.push(`${UPDATED_AT_MS} > $${params.length}::timestamptz`);
  }
  if (filter?.updated_before !== undefined) {
    params.push(filter.updated_before);
    parts.push(`${UPDATED_AT_MS} < $${params.length}::timestamptz`);
  }
  return parts.join(' AND ');
}
