/**
 * `npm run bench -- --agent-loop` end to end on a dozen problems: two servers (with and
 * without outcome ranking) answer the same asks, outcomes are reported, and the table has a
 * row per memory and round. What it measures is not checked (a benchmark, not a timed test).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { repoRoot } from '../../bench/args.js';
import { runAgentLoopBench } from '../../bench/agent-loop/run.js';

const built = existsSync(join(repoRoot(), 'dist', 'commands', 'main.js'));
const data = [resolve(repoRoot(), '..', 'shared', 'data', 'mbpp-dev.json'), '/work/shared/data/mbpp-dev.json'].find((p) => existsSync(p));
if (!built) console.warn('\n[skip] agent-loop benchmark: run `npm run build` first (it spawns bin/service.js).\n');
if (!data) console.warn('\n[skip] agent-loop benchmark: the MBPP development set is not beside the repository.\n');

describe.skipIf(!built || !data)('agent-loop benchmark', () => {
  it('runs both arms over a few problems and prints a row per memory and round', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      await runAgentLoopBench([
        '--agent-loop', '--data', data!, '--problems', '12', '--seeds', '1', '--rounds', '2', '--memories', 'S1,S2', '--streams', 'R', '--cpu-patterns', '0',
      ]);
      const out = log.mock.calls.map((c) => String(c[0])).join('\n');
      expect(out).toMatch(/12 problems, seeds 1/);
      for (const [memory, round] of [['S1', 'R1'], ['S1', 'R2'], ['S2', 'R1'], ['S2', 'R2']]) expect(out).toMatch(new RegExp(`^${memory}\\s+${round}\\s`, 'm'));
      // Outcomes were reported (the service answers recall_id) and the arms are paired.
      expect(out).toMatch(/[1-9]\d* outcomes reported per arm/);
    } finally {
      log.mockRestore();
    }
  }, 300_000);
});
