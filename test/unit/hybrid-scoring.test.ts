import { describe, expect, it } from 'vitest';
import {
  bm25, bm25OfText, Bm25Scorer, distinctTerms, idf, isKeywordTerm, keywordTermsOf, MAX_KEYWORD_TERM_BYTES, selectiveDocCap, selectiveTerms, termCounts, termsOf,
} from '../../src/core/bm25.js';
import { blendCandidates, centeredCosine, dot, minMaxNormalise, unitVector, type HybridCandidate } from '../../src/core/hybrid.js';
import {
  applyVerdict, decideKeywordTier, decideTier, fitAdaptThreshold, normalisedTaskText, sharedWordsInOrder, type TierPolicyInForce,
} from '../../src/core/tier-policy.js';

describe('BM25 (core/bm25.ts)', () => {
  it('tokenizes like the other lexical comparisons, ASCII fast path and Unicode alike', () => {
    expect(termsOf('Parse a CSV-file, then   SUM it: x_y 3D!')).toEqual(['parse', 'a', 'csv', 'file', 'then', 'sum', 'it', 'x', 'y', '3d']);
    expect(termsOf('Résumé parser für naïve CAFÉ')).toEqual(['résumé', 'parser', 'für', 'naïve', 'café']);
    expect(distinctTerms('sum the sum')).toEqual(['sum', 'the']);
  });

  it('scores by the textbook formula with k1 1.2 and b 0.75', () => {
    const stats = { docs: 10, totalTerms: 50, df: new Map([['csv', 2], ['sum', 5]]) };
    const doc = termCounts(termsOf('csv csv sum x y z'));
    const expected = (t: string, tf: number) => (idf(stats.df.get(t)!, 10) * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * 6) / 5));
    expect(bm25(['csv', 'sum', 'absent'], doc, 6, stats)).toBeCloseTo(expected('csv', 2) + expected('sum', 1), 12);
    expect(idf(2, 10)).toBeCloseTo(Math.log(1 + 8.5 / 2.5), 12);
    expect(bm25OfText(['nothing'], 'csv sum', stats)).toBe(0);
  });

  it('scores many texts for one query exactly as bm25OfText does (ASCII in place, anything else its own path)', () => {
    const stats = { docs: 40, totalTerms: 300, df: new Map([['csv', 3], ['sum', 9], ['3d', 1], ['café', 2], ['a', 30]]) };
    const queries = [['csv', 'sum', 'absent'], ['sum', 'csv', 'sum'], ['café', 'csv', '3d', 'a'], []];
    const texts = [
      'Sum a CSV column', 'csv,CSV;csv sum', 'SUMMARY of csvs', '3D models in a 3d-viewer', '', '!!!',
      'Café: sum the CSV', 'résumé csv sum', 'a a a A', 'x_y csv9 csv 9',
    ];
    for (const terms of queries) {
      const scorer = new Bm25Scorer(terms, stats);
      for (const text of texts) expect(scorer.score(text)).toBe(bm25OfText(terms, text, stats));
    }
    expect(new Bm25Scorer(['csv'], stats).score('CSV csv')).toBeGreaterThan(new Bm25Scorer(['csv'], stats).score('csv'));
  });

  it('a term over MAX_KEYWORD_TERM_BYTES (UTF-8 bytes) is no keyword: not in queries, postings or lengths', () => {
    const n = MAX_KEYWORD_TERM_BYTES;
    expect([isKeywordTerm('a'.repeat(n)), isKeywordTerm('a'.repeat(n + 1))]).toEqual([true, false]);
    // é is 2 bytes, € 3, 😀 4 (two UTF-16 units).
    expect([isKeywordTerm('é'.repeat(n / 2)), isKeywordTerm(`${'é'.repeat(n / 2 - 1)}ab`), isKeywordTerm(`${'é'.repeat(n / 2)}a`)]).toEqual([true, true, false]);
    expect([isKeywordTerm('€'.repeat(Math.floor(n / 3))), isKeywordTerm(`${'€'.repeat(Math.floor(n / 3))}ab`)]).toEqual([true, n % 3 >= 2]);
    const blob = 'x'.repeat(n + 1);
    const text = `decode the ${blob} payload ${'z'.repeat(n)}`;
    expect(keywordTermsOf(text)).toEqual(['decode', 'the', 'payload', 'z'.repeat(n)]);
    expect(distinctTerms(`${blob} payload`)).toEqual(['payload']);
    const stats = { docs: 10, totalTerms: 40, df: new Map([['payload', 2], ['decode', 1]]) };
    // The long word counts neither as a match nor in the document's length, on both scoring paths.
    expect(bm25OfText(['payload', 'decode'], text, stats)).toBe(bm25(['payload', 'decode'], termCounts(keywordTermsOf(text)), 4, stats));
    expect(new Bm25Scorer(['payload', 'decode'], stats).score(text)).toBe(bm25OfText(['payload', 'decode'], text, stats));
    expect(new Bm25Scorer(['payload'], stats).score(`${text} é`)).toBe(bm25OfText(['payload'], `${text} é`, stats));
  });

  it('finds keyword candidates through selective terms only', () => {
    const stats = { docs: 1000, df: new Map([['in', 900], ['csv', 40], ['file', 201]]) };
    expect(selectiveTerms(['in', 'csv', 'file'], stats)).toEqual(['csv']);
    // A small project keeps every term up to 50 documents.
    expect(selectiveTerms(['in'], { docs: 60, df: new Map([['in', 50]]) })).toEqual(['in']);
    // A large one caps a selective term at 125 patterns, whatever 20% of it is.
    const large = { docs: 1_000_000, df: new Map([['data', 50_000], ['pandas', 125], ['parquet', 126]]) };
    expect(selectiveTerms(['data', 'pandas', 'parquet'], large)).toEqual(['pandas']);
    expect([60, 500, 625, 1000, 10_000, 1_000_000].map(selectiveDocCap)).toEqual([50, 100, 125, 125, 125, 125]);
  });
});

describe('centring and blend (core/hybrid.ts)', () => {
  const q = unitVector(new Float32Array([1, 2, 0, 1]));
  const d = unitVector(new Float32Array([2, 1, 1, 0]));
  const m = new Float32Array([0.3, 0.3, 0.1, 0.2]);

  it('computes cos(q − m, d − m) from dot products alone', () => {
    const qm = q.map((x, i) => x - m[i]);
    const dm = d.map((x, i) => x - m[i]);
    const direct = dot(qm, dm) / Math.sqrt(dot(qm, qm) * dot(dm, dm));
    expect(centeredCosine(dot(q, d), dot(q, m), dot(d, m), dot(m, m))).toBeCloseTo(direct, 6);
  });

  it('min-max normalises with the floor at 0 at most, equal values all 1 when positive', () => {
    expect(minMaxNormalise([2, 4, 3])).toEqual([0.5, 1, 0.75]);
    expect(minMaxNormalise([-1, 1, 0])).toEqual([0, 1, 0.5]);
    expect(minMaxNormalise([0.4, 0.4])).toEqual([1, 1]);
    expect(minMaxNormalise([0, 0])).toEqual([0, 0]);
  });

  it('blends the normalised sides by the vector weight, and uses BM25 alone without a query vector', () => {
    const c = (id: string, task: string, cosine: number): HybridCandidate => ({
      id, task, cosine, similarity: cosine, mean_dot: 0.1, code_terms: '', recent_evals: [], updated_at: '2026-01-01T00:00:00Z',
    });
    const set = {
      candidates: [c('a', 'sum a csv column', 0.9), c('b', 'resize images', 0.5), c('c', 'csv', 0.7)],
      stats: { docs: 30, totalTerms: 90, df: new Map([['csv', 2], ['column', 1]]), vectors: 30, query_mean_dot: 0.2, mean_norm2: 0.3 },
    };
    const blended = blendCandidates(set, q, ['csv', 'column'], 0.6);
    const centred = blended.map((b) => b.centered_cosine);
    expect(centred[0]).toBeCloseTo(centeredCosine(0.9, 0.2, 0.1, 0.3), 12);
    const vn = minMaxNormalise(centred);
    const kn = minMaxNormalise(blended.map((b) => b.bm25));
    blended.forEach((b, i) => expect(b.blended).toBeCloseTo(0.6 * vn[i] + 0.4 * kn[i], 12));
    expect(blended[1].bm25).toBe(0);
    const keywordOnly = blendCandidates(set, null, ['csv', 'column'], 0.6);
    expect(keywordOnly.map((b) => b.blended)).toEqual(kn);
  });
});

describe('tier policies (core/tier-policy.ts)', () => {
  const calibrated: TierPolicyInForce = { policy: 'calibrated', duplicate_threshold: null, adapt_threshold: 0.6, source: 'project_fit' };
  const fixed: TierPolicyInForce = { policy: 'fixed', duplicate_threshold: 0.92, adapt_threshold: 0.7, source: 'spec_default' };

  it('calls the same text a duplicate whatever its case, spacing and punctuation', () => {
    expect(normalisedTaskText('  Parse a CSV-file;  now ')).toBe('parse a csv file now');
    const d = decideTier(calibrated, { queryText: 'PARSE a csv   file!', candidateText: 'Parse a CSV file', cosine: 0.5, centered: 0.1 });
    expect(d).toEqual({ tier: 'duplicate', rule: 'same_text', threshold: null });
  });

  it('normalises task text as lower-cased runs of Unicode letters and digits joined by one space', () => {
    // The rule as first written (a Unicode expression over the whole text): the word walk must agree.
    const byExpression = (text: string) => {
      const words = text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
      return words.length > 0 ? words : text.trim().replace(/\s+/gu, ' ');
    };
    const texts = [
      'Parse a CSV-file;  now', '\tsum\n2 columns\r\n', 'x', '', '   ', '!!!', '🙂 🙂', 'café au lait', 'İstanbul DİYARBAKIR',
      'naïve_bayes (v2.0)', 'ΣΊΣΥΦΟΣ', '数据 清洗 v3', 'Straße—groß', 'snake_case-and.dots/slashes', '٣ arabic digits', 'a\u00a0b',
    ];
    for (const text of texts) expect(normalisedTaskText(text), JSON.stringify(text)).toBe(byExpression(text));
  });

  it('takes cosine ≥ 0.999 as a duplicate only when the shared words keep their order', () => {
    expect(sharedWordsInOrder('Convert HTML to Markdown', 'Convert Markdown to HTML')).toBe(false);
    expect(sharedWordsInOrder('Parse the CSV file', 'parse CSV file please')).toBe(true);
    const reordered = decideTier(calibrated, { queryText: 'Convert HTML to Markdown', candidateText: 'Convert Markdown to HTML', cosine: 1, centered: 1 });
    expect(reordered.tier).toBe('adapt');
    const same = decideTier(calibrated, { queryText: 'Parse the CSV file', candidateText: 'parse CSV file please', cosine: 0.9995, centered: 0.99 });
    expect(same).toEqual({ tier: 'duplicate', rule: 'cosine_0999', threshold: 0.999 });
  });

  it('gives adapt from the centred cosine against the fitted threshold, else fresh', () => {
    expect(decideTier(calibrated, { queryText: 'a', candidateText: 'b', cosine: 0.97, centered: 0.6 }).rule).toBe('centered_adapt');
    expect(decideTier(calibrated, { queryText: 'a', candidateText: 'b', cosine: 0.97, centered: 0.59 })).toEqual({ tier: 'fresh', rule: 'below_adapt', threshold: 0.6 });
  });

  it('keeps the fixed thresholds on the raw cosine', () => {
    expect(decideTier(fixed, { queryText: 'a', candidateText: 'a', cosine: 0.93, centered: 0 }).rule).toBe('fixed_duplicate');
    expect(decideTier(fixed, { queryText: 'a', candidateText: 'b', cosine: 0.7, centered: 0 }).rule).toBe('fixed_adapt');
    expect(decideKeywordTier(calibrated, { queryText: 'x y', candidateText: 'x z', overlap: 0.33 }).tier).toBe('fresh');
  });

  it('lets the LLM raise adapt to duplicate under the calibrated policy only, and lower anything', () => {
    const adapt = { tier: 'adapt' as const, rule: 'centered_adapt' as const, threshold: 0.6 };
    expect(applyVerdict('calibrated', adapt, 'duplicate')).toEqual({ tier: 'duplicate', rule: 'llm_verified', threshold: null });
    expect(applyVerdict('fixed', adapt, 'duplicate')).toEqual(adapt);
    expect(applyVerdict('calibrated', { tier: 'fresh', rule: 'below_adapt', threshold: 0.6 }, 'duplicate').tier).toBe('fresh');
    expect(applyVerdict('calibrated', adapt, 'fresh').tier).toBe('fresh');
  });

  it('fits the 90th percentile of the best scores, and nothing below 20 of them', () => {
    expect(fitAdaptThreshold(Array.from({ length: 19 }, () => 0.5))).toBeNull();
    const scores = Array.from({ length: 21 }, (_, i) => i / 20);
    expect(fitAdaptThreshold(scores)).toBe(0.9);
  });
});
