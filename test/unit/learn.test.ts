/** The pure learn rules (src/core/learn.ts): where a run lands, and what it writes. */
import { describe, expect, it } from 'vitest';
import { landOnExisting, newPattern, type LearnRun } from '../../src/core/learn.js';
import type { PatternRecord } from '../../src/core/types.js';

const FIRST = '2026-11-01T10:00:00.000Z';
const LATER = '2026-11-28T12:00:00.000Z';

function run(overrides: Partial<LearnRun> = {}): LearnRun {
  return {
    task: 'parse a CSV file and sum a column',
    code: 'import csv\nprint(sum(float(r[1]) for r in csv.reader(open("f.csv"))))',
    output: '42.0',
    run_id: 'run-2',
    author: 'agent-7',
    redacted: false,
    eval_score: 8,
    classification: 'internal',
    source: 'cli',
    expires_at: null,
    now: LATER,
    ...overrides,
  };
}

function stored(overrides: Partial<PatternRecord> = {}): PatternRecord {
  return {
    ...newPattern('0b6f1a52-3c1e-4f0e-9d33-1f2a3b4c5d6e', run({ code: 'old code', output: 'old', run_id: 'run-1', eval_score: 7, now: FIRST })),
    reuse_count: 5,
    last_aged_at: '2026-11-10T00:00:00.000Z',
    ...overrides,
  };
}

describe('newPattern', () => {
  it('stores the run as a pattern of its own: its score as eval and success score, no reuse yet, times from the run', () => {
    const r = run();
    expect(newPattern('id-1', r)).toEqual({
      id: 'id-1',
      task: r.task,
      code: r.code,
      output: r.output,
      eval_score: 8,
      success_score: 8,
      reuse_count: 0,
      run_id: 'run-2',
      classification: 'internal',
      source: 'cli',
      author: 'agent-7',
      expires_at: null,
      redacted: false,
      created_at: LATER,
      updated_at: LATER,
      last_aged_at: null,
    });
  });
});

describe('landOnExisting', () => {
  it('keeps the stored pattern when the run scores no better than its success score', () => {
    const existing = stored({ success_score: 8 });
    expect(landOnExisting(existing, run({ eval_score: 8 }))).toEqual({ op: 'keep', id: existing.id });
    expect(landOnExisting(existing, run({ eval_score: 7.5 }))).toEqual({ op: 'keep', id: existing.id });
  });

  it('compares with the success score (aged), not the first eval score', () => {
    const aged = stored({ eval_score: 9, success_score: 6 });
    expect(landOnExisting(aged, run({ eval_score: 7 })).op).toBe('replace');
  });

  it('a better run replaces the solution in place: key, task, creation and reuse count kept; scores, code and times renewed', () => {
    const existing = stored();
    const landed = landOnExisting(existing, run({ eval_score: 9.5 }));
    expect(landed).toEqual({
      op: 'replace',
      pattern: {
        ...existing,
        code: run().code,
        output: '42.0',
        eval_score: 9.5,
        success_score: 9.5,
        run_id: 'run-2',
        updated_at: LATER,
        last_aged_at: LATER,
      },
    });
  });

  it('keeps the stored run id when the better run has none, and a redacted pattern stays marked redacted', () => {
    const existing = stored({ redacted: true });
    const landed = landOnExisting(existing, run({ eval_score: 9.9, run_id: null, redacted: false }));
    expect(landed.op).toBe('replace');
    if (landed.op !== 'replace') return;
    expect(landed.pattern.run_id).toBe('run-1');
    expect(landed.pattern.redacted).toBe(true);
    expect(landOnExisting(stored(), run({ eval_score: 9.9, redacted: true }))).toMatchObject({ pattern: { redacted: true } });
  });
});
