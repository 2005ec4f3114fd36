import { describe, expect, it } from 'vitest';
import { isNamedInTask, validatePipeline } from '../../src/core/pipeline.js';

const stage = (name: string, reads: string[], writes: string[]) => ({ name, reads, writes });

describe('isNamedInTask', () => {
  it('finds a file named in the task, ignoring case', () => {
    expect(isNamedInTask('Load Sales.CSV and chart it', 'sales.csv')).toBe(true);
  });
  it('requires a whole mention, not part of a longer name', () => {
    expect(isNamedInTask('read metadata.csv', 'data.csv')).toBe(false);
    expect(isNamedInTask('read data.csv', 'data.csv')).toBe(true);
    expect(isNamedInTask('read in/data.csv', 'data.csv')).toBe(true);
  });
  it('treats _ and - like spaces', () => {
    expect(isNamedInTask('summarise the raw data', 'raw_data')).toBe(true);
    expect(isNamedInTask('summarise raw-data', 'raw_data')).toBe(true);
  });
  it('accepts the last path segment', () => {
    expect(isNamedInTask('clean orders.json', 'inputs/orders.json')).toBe(true);
  });
  it('is false for unrelated or blank names', () => {
    expect(isNamedInTask('clean orders.json', 'customers.json')).toBe(false);
    expect(isNamedInTask('anything', '  ')).toBe(false);
  });
});

describe('validatePipeline', () => {
  const task = 'Read orders.csv, compute totals and write a report';

  it('accepts a consistent chain that starts from an input named in the task', () => {
    const stages = [
      stage('parse', ['orders.csv'], ['orders.json']),
      stage('total', ['orders.json'], ['totals.json']),
      stage('report', ['totals.json', 'orders.json'], ['report.md']),
    ];
    expect(validatePipeline(task, stages)).toEqual([]);
  });

  it('reports a broken dependency: read that nobody earlier produced and the task does not name', () => {
    const errors = validatePipeline(task, [stage('parse', ['orders.csv'], ['orders.json']), stage('total', ['prices.json'], ['t.json'])]);
    expect(errors).toEqual([
      'broken dependency: stage 2 "total" reads "prices.json", which no earlier stage writes and the task does not name as an input',
    ]);
  });

  it('reports a cycle when a stage reads what it writes', () => {
    const errors = validatePipeline(task, [stage('clean', ['orders.csv'], ['orders.csv'])]);
    expect(errors).toEqual(['cycle: stage 1 "clean" both reads and writes "orders.csv"']);
  });

  it('reports a cycle when a file is read before the later stage that writes it', () => {
    const errors = validatePipeline(task, [stage('a', ['orders.csv', 'b.json'], ['a.json']), stage('b', ['a.json'], ['b.json'])]);
    expect(errors).toEqual(['cycle: stage 1 "a" reads "b.json" before stage 2 "b" writes it']);
  });

  it('reports a conflict when two stages write the same file', () => {
    const errors = validatePipeline(task, [
      stage('a', ['orders.csv'], ['out.json']),
      stage('b', ['out.json'], ['x.json']),
      stage('c', ['x.json'], ['out.json']),
    ]);
    expect(errors).toEqual(['conflict: "out.json" is written by stage 1 "a" and stage 3 "c"']);
  });

  it('lists every problem, one readable string each', () => {
    const errors = validatePipeline(task, [
      stage('a', ['missing.txt', 'later.json'], ['dup.json']),
      stage('b', ['dup.json'], ['dup.json', 'later.json']),
    ]);
    expect(errors).toHaveLength(4);
    expect(errors.filter((e) => e.startsWith('broken dependency:'))).toHaveLength(1);
    expect(errors.filter((e) => e.startsWith('cycle:'))).toHaveLength(2);
    expect(errors.filter((e) => e.startsWith('conflict:'))).toHaveLength(1);
  });

  it('trims names, ignores blanks and repeats inside one stage', () => {
    const stages = [stage('a', [' orders.csv ', '', 'orders.csv'], ['x.json', 'x.json ']), stage('b', ['x.json'], [])];
    expect(validatePipeline(task, stages)).toEqual([]);
  });

  it('an empty pipeline is invalid', () => {
    expect(validatePipeline(task, [])).toEqual(['the pipeline has no stages']);
  });
});
