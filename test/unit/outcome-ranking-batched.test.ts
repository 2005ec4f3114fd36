import { describe, expect, it } from 'vitest';
import { createQueryDots } from '../../src/adapters/storage/json/engine/index.js';
import { centeredCosine } from '../../src/core/hybrid.js';
import {
  DEFAULT_OUTCOME_RANKING, EXACT_WORDING_MOVE, failureWeight, jsQueryDots, MAX_FAILURES_WEIGHED, MAX_LESSONS, outcomeAdjustments,
  type OutcomeAdjustment, type OutcomeQuery, type OutcomeRankingSettings,
} from '../../src/core/outcome-ranking.js';
import type { OutcomeEvidence, QuantisedVector } from '../../src/core/outcome-types.js';
import { quantiseVector } from '../../src/core/recall-trace.js';

/**
 * The batched outcome stage (comparisons planned, made in one call, SIMD or JavaScript) against
 * the rule computed the plain way, one failure at a time (docs/behavior.md "Outcome ranking"),
 * on random inputs: the same parts, bit for bit, and so the same ranking.
 */

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The rule, one failure at a time, as written in the behaviour doc: the reference. */
function reference(query: OutcomeQuery, evidence: ReadonlyMap<string, readonly OutcomeEvidence[]>, settings: OutcomeRankingSettings): Map<string, OutcomeAdjustment> {
  const q = query.vector ? quantiseVector(query.vector).values : null;
  const norm = (v: Int8Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  const similarity = (v: QuantisedVector | null): number => {
    if (q === null || v === null || v.values.length !== q.length || !(norm(q) > 0)) return 0;
    let dot = 0;
    for (let i = 0; i < q.length; i++) dot += q[i] * v.values[i];
    if (!(norm(v.values) > 0)) return 0;
    const raw = dot / (norm(q) * norm(v.values));
    return query.centring === null ? Math.max(-1, Math.min(1, raw)) : centeredCosine(raw, query.centring.queryMeanDot, query.centring.queryMeanDot, query.centring.meanNorm2);
  };
  const out = new Map<string, OutcomeAdjustment>();
  for (const [id, items] of evidence) {
    if (items.length === 0) continue;
    const same = items.find((e) => e.query_normalized === query.normalized);
    const exact = same ? (same.passed ? 'passed' : 'failed') : null;
    const others = items.filter((e) => !e.passed && e.query_normalized !== query.normalized).slice(0, MAX_FAILURES_WEIGHED);
    const weighed = items
      .filter((e) => !e.passed && (e.query_normalized === query.normalized || others.includes(e)))
      .map((e) => {
        const c = e.query_normalized === query.normalized ? 1 : similarity(e.query_vector);
        return { e, c, penalty: e.query_normalized === query.normalized ? 0 : failureWeight(c, settings.tau) };
      })
      .filter((f) => f.c >= settings.tau)
      .sort((a, b) => b.c - a.c);
    const worst = Math.max(0, ...weighed.map((f) => f.penalty));
    const local = worst > 0 ? -settings.delta * worst : 0;
    const move = exact === 'failed' ? -EXACT_WORDING_MOVE : exact === 'passed' ? EXACT_WORDING_MOVE : 0;
    out.set(id, {
      adjustment: local + move, local, exact, exact_move: move,
      failures: weighed.slice(0, 5).map(({ e, c, penalty }) => ({ recall_id: e.recall_id, query: e.query, at: e.at, similarity: c, penalty })),
      lessons: weighed.filter((f) => f.e.detail).slice(0, MAX_LESSONS).map(({ e, c }) => ({ detail: e.detail!, at: e.at, similarity: c, query: e.query })),
    });
  }
  return out;
}

/** A random project: queries near a few topics (so some failures are near), shared vectors, odd cases. */
function scenario(seed: number) {
  const rnd = random(seed);
  const dims = [2, 7, 64, 100, 384, 1100][Math.floor(rnd() * 6)];
  const topics = Array.from({ length: 3 }, () => Float32Array.from({ length: dims }, () => rnd() * 2 - 1));
  const near = () => {
    const t = topics[Math.floor(rnd() * topics.length)];
    const noise = rnd() * 0.8;
    return Float32Array.from(t, (x) => x + (rnd() * 2 - 1) * noise);
  };
  const wordings = Array.from({ length: 12 }, (_, i) => `wording ${i}`);
  // Recalls: each a wording and a vector (sometimes none, sometimes of another length, now and
  // then a -128 the quantiser never writes), shared by every pattern reported against it.
  const recalls = Array.from({ length: 40 }, (_, i) => {
    const r = rnd();
    let vector: QuantisedVector | null = r < 0.08 ? null : quantiseVector(r < 0.12 ? Float32Array.from({ length: dims + 1 }, () => rnd()) : near());
    if (vector && rnd() < 0.1) vector = { values: vector.values.map((x, j) => (j === 0 ? -128 : x)), scale: vector.scale };
    if (vector && rnd() < 0.03) vector = { values: new Int8Array(vector.values.length), scale: 0 };
    return { id: `r${i}`, normalized: wordings[Math.floor(rnd() * wordings.length)], vector };
  });
  const evidence = new Map<string, OutcomeEvidence[]>();
  for (let p = 0; p < 25; p++) {
    const n = Math.floor(rnd() * 16);
    const items: OutcomeEvidence[] = [];
    for (let k = 0; k < n; k++) {
      const r = recalls[Math.floor(rnd() * recalls.length)];
      items.push({
        recall_id: r.id, pattern_key: `key-p${p}`, pattern_id: `p${p}`, passed: rnd() < 0.3, score: null,
        detail: rnd() < 0.6 ? `assert case ${k} failed` : null, source: 'tests', at: new Date(Date.UTC(2026, 0, 1, 0, 0, 100 - k)).toISOString(),
        query: r.normalized, query_normalized: r.normalized, query_vector: r.vector,
      });
    }
    evidence.set(`p${p}`, items);
  }
  const query: OutcomeQuery = {
    normalized: wordings[Math.floor(rnd() * wordings.length)],
    vector: rnd() < 0.1 ? null : near(),
    centring: rnd() < 0.5 ? null : { queryMeanDot: rnd() * 0.5, meanNorm2: rnd() * 0.4 },
  };
  const settings: OutcomeRankingSettings = rnd() < 0.5 ? DEFAULT_OUTCOME_RANKING : { delta: rnd() * 0.5, tau: rnd() * 0.9 };
  const base = new Map([...evidence.keys()].map((id) => [id, rnd()]));
  return { query, evidence, settings, base };
}

function ranking(base: Map<string, number>, parts: Map<string, OutcomeAdjustment>): string[] {
  const score = (id: string) => base.get(id)! + (parts.get(id)?.adjustment ?? 0);
  return [...base.keys()].sort((a, b) => score(b) - score(a) || (a < b ? -1 : 1));
}

describe('outcome ranking, batched', () => {
  it('gives the parts and the ranking of the one-failure-at-a-time rule, bit for bit, with either kernel', () => {
    const simd = createQueryDots();
    let near = 0;
    let exact = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const { query, evidence, settings, base } = scenario(seed);
      const want = reference(query, evidence, settings);
      for (const dots of [jsQueryDots, simd]) {
        const got = outcomeAdjustments(query, evidence, settings, dots);
        expect(got).toEqual(want);
        expect(ranking(base, got)).toEqual(ranking(base, want));
      }
      for (const part of want.values()) {
        if (part.local < 0) near++;
        if (part.exact !== null) exact++;
      }
    }
    // The random projects exercised both parts of the rule.
    expect(near).toBeGreaterThan(100);
    expect(exact).toBeGreaterThan(100);
  });

  it('the SIMD comparisons are the exact integer dot products, whatever the length and however many rows', () => {
    const rnd = random(7);
    const simd = createQueryDots();
    for (const [n, count] of [[384, 1], [384, 3000], [7, 5], [65, 40], [1024, 20], [1500, 3]]) {
      const byte = () => Math.floor(rnd() * 256) - 128;
      const q = Int8Array.from({ length: n }, byte);
      const rows = Array.from({ length: count }, (_, i) => (i === 0 ? new Int8Array(n).fill(-128) : Int8Array.from({ length: n }, byte)));
      if (n === 1024) q.fill(-128);
      const want = new Float64Array(count);
      const got = new Float64Array(count);
      jsQueryDots(q, rows, count, want);
      simd(q, rows, count, got);
      expect(got).toEqual(want);
      if (n === 1024) expect(want[0]).toBe(128 * 128 * 1024);
    }
  });
});
