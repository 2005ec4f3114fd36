/**
 * The hybrid recall statement's text is built once per shape (hybrid-search.ts hybridSql): the
 * same shape must give the very same string, and anything the text depends on (filters that
 * add parameters, limits, the eval window, dimensions) must give its own text with the
 * parameter numbers of its own parameters.
 */
import { describe, expect, it } from 'vitest';
import { buildHybridStatement } from '../../src/adapters/storage/postgres/hybrid-search.js';
import type { HybridQuery } from '../../src/core/hybrid.js';

const SCOPE = { tenant_id: 't', project_id: 'p' };
const unit = (dim: number) => new Float32Array(dim).fill(1 / Math.sqrt(dim));

function query(over: Partial<HybridQuery> = {}): HybridQuery {
  return { vector: unit(384), terms: ['sum', 'csv'], vectorK: 20, keywordK: 10, filter: {}, evalWindow: 10, ...over };
}

describe('hybrid statement (PostgreSQL) text by shape', () => {
  it('gives the same string for the same shape, whatever the values', () => {
    const a = buildHybridStatement(SCOPE, query());
    const b = buildHybridStatement({ tenant_id: 'other', project_id: 'x' }, query({ terms: ['parse'], vector: unit(384).map((x, i) => (i === 0 ? -x : x)) }));
    expect(b.sql).toBe(a.sql);
    expect(b.params[1]).toBe('other');
    expect(b.params[3]).toEqual(['parse']);
    expect(a.params).toHaveLength(5);
    expect(a.params[4]).toBe(10);
  });

  it('gives another text when a filter adds parameters, and numbers the later ones after it', () => {
    const plain = buildHybridStatement(SCOPE, query());
    const filtered = buildHybridStatement(SCOPE, query({ filter: { classification: 'internal', min_score: 5 } }));
    expect(filtered.sql).not.toBe(plain.sql);
    expect(filtered.sql).toContain('classification = $4');
    expect(filtered.sql).toContain('success_score >= $5');
    expect(filtered.sql).toContain('unnest($6::text[])');
    expect(filtered.sql).toContain('LIMIT $7');
    expect(filtered.params.slice(3)).toEqual(['internal', 5, ['sum', 'csv'], 10]);
    // Another filter value is the same shape.
    expect(buildHybridStatement(SCOPE, query({ filter: { classification: 'public', min_score: 7 } })).sql).toBe(filtered.sql);
  });

  it('writes each limit, the eval window and the dimensions into its own text', () => {
    const base = buildHybridStatement(SCOPE, query()).sql;
    const texts = [
      buildHybridStatement(SCOPE, query({ vectorK: 40 })).sql,
      buildHybridStatement(SCOPE, query({ keywordK: 20 })).sql,
      buildHybridStatement(SCOPE, query({ evalWindow: 0 })).sql,
      buildHybridStatement(SCOPE, query({ vector: unit(1536) })).sql,
      buildHybridStatement(SCOPE, query({ vector: null })).sql,
    ];
    expect(new Set([base, ...texts]).size).toBe(6);
    expect(texts[0]).toContain('LIMIT 40');
    expect(texts[1]).toMatch(/ORDER BY k\.s DESC, k\.id\s+LIMIT 20/);
    expect(texts[2]).not.toContain('recent_evals');
    expect(texts[3]).toContain('halfvec(1536)');
    expect(texts[4]).not.toContain('nearest');
  });

  it('widens the search for a k past the default candidate list', () => {
    expect(buildHybridStatement(SCOPE, query({ vectorK: 40 })).setup).toBe('');
    expect(buildHybridStatement(SCOPE, query({ vectorK: 100 })).setup).toContain('hnsw.ef_search = 100');
    expect(buildHybridStatement(SCOPE, query({ vector: null, vectorK: 100 })).setup).toBe('');
  });
});
