import { readFileSync } from 'node:fs';
import type { TestProblem } from './sandbox.js';

/** One problem of the MBPP development set (../shared/data/README.md describes the file). */
export interface MbppProblem extends TestProblem {
  phrasings: string[];
  typo_variant: string;
  solution: string;
  entry_point: string;
}

export interface MbppSet {
  problems: MbppProblem[];
  byId: Map<string, MbppProblem>;
  /** Pairs of different problems whose texts share most words, neither solution passing the other's tests. */
  hardNegatives: { a: string; b: string }[];
}

export function loadMbpp(path: string): MbppSet {
  const raw = JSON.parse(readFileSync(path, 'utf8')) as {
    groups: (MbppProblem & { test_imports?: string[] })[];
    hard_negatives: { a: string; b: string }[];
  };
  const problems = raw.groups.map((g) => ({ ...g, test_imports: g.test_imports ?? [] }));
  const byId = new Map(problems.map((p) => [p.id, p]));
  const hardNegatives = raw.hard_negatives.filter((h) => byId.has(h.a) && byId.has(h.b)).map(({ a, b }) => ({ a, b }));
  return { problems, byId, hardNegatives };
}

/** The wordings an agent asks a problem in: every one but the original (the paraphrases, then the typo variant). */
export function askedWordings(p: MbppProblem): string[] {
  return [...p.phrasings.slice(1), p.typo_variant];
}
