import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { syntheticQueries, syntheticRuns, templatedTask } from '../../bench/synthetic.js';
import { postingShare, zipfianTasks } from '../../bench/corpora.js';
import { parseHttpArgs, type HttpBenchOptions } from '../../bench/http/options.js';
import { parsePgStatementsArgs } from '../../bench/pg-statements.js';
import { conalaSet, withDistractors } from '../../bench/recall-quality/protocol.js';
import { parseRecallQualityArgs } from '../../bench/recall-quality/run.js';

const CONALA = fileURLToPath(new URL('../fixtures/recall/conala-recall.json', import.meta.url));

/** CoNaLa's protocol: the titles stored, the crowd rewrites as queries. */
function conalaShare(): number {
  const data = JSON.parse(readFileSync(CONALA, 'utf8')) as { groups: { phrasings: string[] }[] };
  return postingShare(data.groups.map((g) => g.phrasings[0]), data.groups.flatMap((g) => g.phrasings.slice(1)));
}

describe('benchmark corpora', () => {
  it('the zipfian corpus reads about as many posting rows per query as human task text; the templated one none at 10k', () => {
    const conala = conalaShare();
    const zipfian = zipfianTasks();
    const zipfianShare = postingShare(syntheticRuns(42, 10_000, zipfian).map((r) => r.task), syntheticQueries(7, 300, new Set(), zipfian));
    const templatedShare = postingShare(syntheticRuns(42, 10_000).map((r) => r.task), syntheticQueries(7, 300, new Set()));
    expect(conala).toBeGreaterThan(0.01);
    expect(zipfianShare).toBeGreaterThan(conala * 0.6);
    expect(zipfianShare).toBeLessThan(conala * 1.4);
    // Every templated word is in 4-10 % of the store, above the per-term cap (1.25 % at 10k).
    expect(templatedShare).toBe(0);
  });

  it('zipfian tasks are seeded, distinct and English words', () => {
    const a = syntheticRuns(3, 500, zipfianTasks()).map((r) => r.task);
    const b = syntheticRuns(3, 500, zipfianTasks()).map((r) => r.task);
    expect(a).toEqual(b);
    expect(new Set(a).size).toBe(500);
    for (const task of a) {
      const words = task.split(' ');
      expect(words.length).toBeGreaterThanOrEqual(6);
      expect(words.length).toBeLessThanOrEqual(14);
      expect(task).toMatch(/^[A-Z][a-z]*( [a-z]+)+$/);
    }
    expect(syntheticRuns(3, 5).map((r) => r.task)).toEqual(syntheticRuns(3, 5, templatedTask).map((r) => r.task));
  });

  it('--pg-statements takes the corpus and counts, and rejects what it cannot run', () => {
    const o = parsePgStatementsArgs(['--pg-statements', '--corpus', 'zipfian', '--patterns', '2000', '--rounds', '3']);
    expect(o).toMatchObject({ corpus: 'zipfian', patterns: 2000, rounds: 3, queries: 200 });
    expect(() => parsePgStatementsArgs(['--rounds', '1'])).toThrow(/at least 2/);
    expect(() => parsePgStatementsArgs(['--corpus', 'wiki'])).toThrow(/--corpus: unknown "wiki"/);
    expect(() => parsePgStatementsArgs(['--queries', '0'])).toThrow(/positive whole number/);
    expect(() => parsePgStatementsArgs(['--size', '5'])).toThrow(/unknown option "--size"/);
  });

  it('--side-by-side needs builds to compare and PostgreSQL, and takes --rounds', () => {
    const o = parseHttpArgs(['--side-by-side', '--storage', 'postgres', '--compare', '/tmp/before', '--rounds', '6']) as HttpBenchOptions;
    expect(o).toMatchObject({ sideBySide: true, rounds: 6, compare: ['/tmp/before'], storages: ['postgres'] });
    expect((parseHttpArgs([]) as HttpBenchOptions)).toMatchObject({ sideBySide: false, rounds: 3 });
    expect(() => parseHttpArgs(['--side-by-side', '--storage', 'postgres'])).toThrow(/needs --compare/);
    expect(() => parseHttpArgs(['--side-by-side', '--compare', '/tmp/before'])).toThrow(/needs --storage postgres/);
    expect(() => parseHttpArgs(['--rounds', '0'])).toThrow(/positive whole number/);
  });

  it('--recall-quality --at-size grows CoNaLa with distractors to that size, once per corpus', () => {
    expect(parseRecallQualityArgs(['--recall-quality'])).toMatchObject({ atSize: 0, distractors: ['templated', 'zipfian'] });
    expect(parseRecallQualityArgs(['--at-size', '10000', '--distractors', 'zipfian'])).toMatchObject({ atSize: 10_000, distractors: ['zipfian'] });
    expect(() => parseRecallQualityArgs(['--at-size', '-1'])).toThrow(/whole number/);
    expect(() => parseRecallQualityArgs(['--distractors', 'wiki'])).toThrow(/unknown "wiki"/);
    const conala = conalaSet(CONALA);
    const stored = conala.groups.reduce((n, g) => n + g.stored.length, 0);
    const grown = withDistractors(conala, 1000, 'zipfian');
    expect(grown.name).toBe(`CoNaLa + ${1000 - stored} zipfian`);
    expect(grown.distractors).toHaveLength(1000 - stored);
    expect(new Set(grown.distractors!.map((d) => d.task)).size).toBe(1000 - stored);
    // The questions are the set's own; a project already that large gets none.
    expect(grown.groups).toBe(conala.groups);
    expect(withDistractors(conala, stored, 'templated')).toBe(conala);
  });

  it('--corpus picks the corpus and rejects others', () => {
    expect((parseHttpArgs([]) as HttpBenchOptions).corpus).toBe('templated');
    expect((parseHttpArgs(['--corpus', 'zipfian']) as HttpBenchOptions).corpus).toBe('zipfian');
    expect(() => parseHttpArgs(['--corpus', 'wiki'])).toThrow(/--corpus: unknown "wiki"/);
  });
});
