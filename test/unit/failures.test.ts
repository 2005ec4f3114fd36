import { describe, expect, it } from 'vitest';
import { clusterFailures, type FailureItem } from '../../src/core/failures.js';

const item = (text: string, count: number, score: number, ...vector: number[]): FailureItem => ({
  text,
  count,
  score,
  vector: new Float32Array(vector),
});

describe('clusterFailures', () => {
  it('groups by cosine ≥ 0.8 and keeps unrelated items apart', () => {
    const clusters = clusterFailures([
      item('missing error handling', 3, 0.6, 1, 0),
      item('no error handling at all', 2, 0.8, 0.95, 0.05),
      item('variable names are unclear', 1, 0.5, 0, 1),
    ]);
    expect(clusters).toEqual([
      { representative: 'missing error handling', members: ['missing error handling', 'no error handling at all'], total_count: 5, avg_score: 0.7 },
      { representative: 'variable names are unclear', members: ['variable names are unclear'], total_count: 1, avg_score: 0.5 },
    ]);
  });

  it('links transitively (single link): A~B and B~C join A and C', () => {
    // angles 0°, 30°, 60°: neighbours cos 30° ≈ 0.866 ≥ 0.8, ends cos 60° = 0.5
    const r = (deg: number) => [Math.cos((deg * Math.PI) / 180), Math.sin((deg * Math.PI) / 180)];
    const clusters = clusterFailures([item('a', 1, 0.5, ...r(0)), item('c', 1, 0.5, ...r(60)), item('b', 1, 0.5, ...r(30))]);
    expect(clusters).toHaveLength(1);
    expect(clusters[0].members.sort()).toEqual(['a', 'b', 'c']);
  });

  it('threshold is inclusive and configurable', () => {
    const a = item('x', 1, 0.5, 1, 0);
    const b = item('y', 1, 0.5, 4, 3); // cosine 4/5 = 0.8 exactly (integers survive Float32)
    expect(clusterFailures([a, b])).toHaveLength(1);
    expect(clusterFailures([a, b], 0.9)).toHaveLength(2);
  });

  it('representative is the highest count; ties go to the most typical wording (Jaccard)', () => {
    const v = [1, 0];
    const clusters = clusterFailures([
      item('odd phrasing entirely', 2, 0.5, ...v),
      item('handle empty input', 2, 0.5, ...v),
      item('handle empty input lists', 1, 0.5, ...v),
    ]);
    expect(clusters[0].representative).toBe('handle empty input');
    expect(clusters[0].members).toEqual(['handle empty input', 'odd phrasing entirely', 'handle empty input lists']);
    const byCount = clusterFailures([item('rare', 1, 0.5, ...v), item('common', 5, 0.5, ...v)]);
    expect(byCount[0].representative).toBe('common');
  });

  it('sorts clusters by total_count desc, then avg_score desc', () => {
    const clusters = clusterFailures([
      item('small', 1, 0.9, 1, 0, 0),
      item('large', 9, 0.5, 0, 1, 0),
      item('small tie', 1, 0.4, 0, 0, 1),
    ]);
    expect(clusters.map((c) => c.representative)).toEqual(['large', 'small', 'small tie']);
  });

  it('returns [] for no items', () => expect(clusterFailures([])).toEqual([]));
});
