import { describe, expect, it } from 'vitest';
import { bm25OfText, Bm25Scorer, distinctTerms, fieldTermScore, idf, termScore } from '../../src/core/bm25.js';
import { CODE_TERM_CAP, codeTermsOf, codeTermText } from '../../src/core/code-terms.js';
import { principalComponents, residualCosine } from '../../src/core/components.js';
import { dedupeByTask } from '../../src/core/dedup.js';
import { dot, unitVector } from '../../src/core/hybrid.js';

describe('the code as a keyword field', () => {
  it('splits identifiers on snake_case and camelCase, lower-cases, and reads literals and comments as words', () => {
    expect(codeTermsOf('def parseCsvColumn(file_path):  # Sum the "Total amount"\n  return HTTPServer.get_all(XMLHttpRequest)')).toEqual([
      'def', 'parse', 'csv', 'column', 'file', 'path', 'sum', 'the', 'total', 'amount', 'return', 'http', 'server', 'get', 'all', 'xml', 'http', 'request',
    ]);
    expect(codeTermsOf('utf8Decode aBCd ABC __init__')).toEqual(['utf8', 'decode', 'a', 'b', 'cd', 'abc', 'init']);
    expect(codeTermsOf('')).toEqual([]);
  });

  it('keeps the first CODE_TERM_CAP terms, and no term too long to be a keyword', () => {
    const long = Array.from({ length: CODE_TERM_CAP + 50 }, (_, i) => `w${i}`).join(' ');
    expect(codeTermsOf(long)).toHaveLength(CODE_TERM_CAP);
    expect(codeTermsOf(`${'x'.repeat(300)} keep`)).toEqual(['keep']);
    expect(codeTermText('fooBar(baz)')).toBe('foo bar baz');
  });

  it('BM25F: a term not in the code, or a code weight of 0, scores as task-only BM25; one in the code adds to the task', () => {
    const i = idf(3, 100);
    expect(fieldTermScore(i, 2, 6, 8, 0, 10, 20, 1)).toBe(termScore(i, 2, 6, 8));
    expect(fieldTermScore(i, 2, 6, 8, 3, 10, 20, 0)).toBe(termScore(i, 2, 6, 8));
    const both = fieldTermScore(i, 2, 6, 8, 3, 10, 20, 1);
    expect(both).toBeGreaterThan(termScore(i, 2, 6, 8));
    // Saturated once over both fields: below the sum of two separate BM25 scores, and below idf (k1 + 1).
    expect(both).toBeLessThan(termScore(i, 2, 6, 8) + termScore(i, 3, 10, 20));
    expect(both).toBeLessThan(i * 2.2);
    // Code alone: a match by the code's words only.
    expect(fieldTermScore(i, 0, 6, 8, 1, 10, 20, 1)).toBeGreaterThan(0);
  });

  it('scores task and code terms exactly as bm25OfText does (ASCII in place, anything else its own path), with the code share apart', () => {
    const stats = { docs: 40, totalTerms: 240, totalCodeTerms: 800, df: new Map([['csv', 4], ['sum', 9], ['column', 2], ['café', 1]]) };
    const terms = ['csv', 'sum', 'column', 'café'];
    const cases: [string, string][] = [
      ['sum a csv file', codeTermText('def sumColumn(rows): return sum(r["csv"] for r in rows)')],
      ['read the café menu', codeTermText('menu = open("café.txt")')],
      ['nothing shared', ''],
      ['sum sum', 'csv'],
    ];
    for (const w of [0, 1, 0.5]) {
      const scorer = new Bm25Scorer(terms, stats, w);
      for (const [task, code] of cases) {
        const score = scorer.score(task, code);
        expect(score, `${task} / ${w}`).toBe(bm25OfText(terms, task, stats, code, w));
        expect(scorer.lastCodeShare).toBeCloseTo(score - bm25OfText(terms, task, stats), 12);
      }
    }
    // The code finds what the task does not say.
    const scorer = new Bm25Scorer(distinctTerms('column'), stats, 1);
    expect(scorer.score('add up a field', 'sum column')).toBeGreaterThan(0);
    expect(scorer.lastCodeShare).toBe(scorer.score('add up a field', 'sum column'));
  });
});

describe('principal directions removed for ranking', () => {
  it('finds the direction of most spread first, then the next, orthonormal and the same for the same sample', () => {
    let seed = 3;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
    const sample = Array.from({ length: 60 }, () => unitVector(Float32Array.from({ length: 8 }, (_, d) => next() * (d === 2 ? 8 : d === 5 ? 4 : 0.5) + 1)));
    const [u1, u2] = principalComponents(sample);
    expect(Math.abs(u1[2])).toBeGreaterThan(0.9);
    expect(Math.abs(u2[5])).toBeGreaterThan(0.8);
    expect(dot(u1, u1)).toBeCloseTo(1, 6);
    expect(dot(u2, u2)).toBeCloseTo(1, 6);
    expect(dot(u1, u2)).toBeCloseTo(0, 6);
    expect(principalComponents(sample)).toEqual([u1, u2]);
    expect(principalComponents(sample.slice(0, 1))).toEqual([]);
  });

  it('gives the cosine of the centred vectors with the directions projected out', () => {
    const q = unitVector(new Float32Array([0.9, 0.2, 0.1, 0.3]));
    const d = unitVector(new Float32Array([0.7, -0.1, 0.5, 0.2]));
    const m = new Float32Array([0.3, 0.1, 0.1, 0.1]);
    const u = [unitVector(new Float32Array([1, 0, 0, 0])), unitVector(new Float32Array([0, 0, 1, 0]))];
    const strip = (v: Float32Array) => {
      const c = Float64Array.from(v, (x, i) => x - m[i]);
      for (const b of u) {
        const p = dot(c, b);
        for (let i = 0; i < c.length; i++) c[i] -= p * b[i];
      }
      return c;
    };
    const a = strip(q);
    const b = strip(d);
    const expected = dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
    const got = residualCosine(dot(q, d), dot(q, m), dot(d, m), dot(m, m), u.map((x) => dot(q, x)), u.map((x) => dot(d, x)), u.map((x) => dot(m, x)));
    expect(got).toBeCloseTo(expected, 6);
  });
});

describe('dedup compares the code too', () => {
  const item = (id: string, task: string, code?: string) => ({ id, task, code: code === undefined ? undefined : codeTermText(code) });
  const run = (items: ReturnType<typeof item>[]) => dedupeByTask(items, (i) => i.task, undefined, undefined, (i) => i.code).map((i) => i.id);

  it('keeps a lookalike task whose code differs, folds one whose code agrees, and folds equal tasks whatever their code', () => {
    expect(run([
      item('a', 'convert an octal number to decimal', 'def octal_to_decimal(n): return int(str(n), 8)'),
      item('b', 'convert a decimal number to octal', 'def decimal_to_octal(n): return oct(n)[2:]'),
    ])).toEqual(['a', 'b']);
    expect(run([
      item('a', 'convert an octal number to decimal', 'def octal_to_decimal(n): return int(str(n), 8)'),
      item('b', 'convert octal number to decimal', 'def octal_to_decimal(num): return int(str(num), 8)'),
    ])).toEqual(['a']);
    expect(run([item('a', 'Export the report', 'print(1)'), item('b', 'export the report ', 'print(2)')])).toEqual(['a']);
    // Without the code (cosine ranking) the task alone decides, as before.
    expect(run([item('a', 'convert an octal number to decimal'), item('b', 'convert a decimal number to octal')])).toEqual(['a']);
  });
});
