import { sameWording, taskWords } from '../../src/core/near-identical.js';
import { askedWordings, type MbppProblem, type MbppSet } from './data.js';
import { between, seededRandom, shuffled } from './random.js';
import type { Sandbox } from './sandbox.js';

/**
 * The three memories of the agent-loop protocol, as lists of runs to learn:
 *
 * - S1 (clean): every problem's original wording with its reference solution.
 * - S2 (contaminated): S1 plus what an agent would have learned from its own work that passed a
 *   weak evaluator but fails the real tests: for half the hard-negative pairs (direction by
 *   seed) one of X's asked wordings with its lookalike Y's code, and for every problem with a
 *   one-token mutant that passes its first test but not all, the mutant under its typo variant.
 *   Wordings learn would merge into X's own pattern (the same words in the same order) are left
 *   out: they would overwrite the clean pattern instead of sitting beside it.
 * - S3 (lookalike absent): S1 minus one side of some hard-negative pairs whose partner stays.
 */

export type RunKind = 'original' | 'lookalike' | 'mutant';

export interface StoredRun {
  task: string;
  code: string;
  eval_score: number;
  kind: RunKind;
  /** The problem whose wording the run was learned under. */
  problem: string;
}

export interface Memories {
  S1: StoredRun[];
  S2: StoredRun[];
  S3: StoredRun[];
  /** S3's left-out problems (still asked) and their stored partners. */
  absent: Set<string>;
  partners: Set<string>;
}

export type MemoryName = 'S1' | 'S2' | 'S3';
export const MEMORY_NAMES: MemoryName[] = ['S1', 'S2', 'S3'];

/** The weak evaluator's scores for everything learned (it liked them all). */
const EVAL_RANGE: [number, number] = [7, 9.5];
/** Mutants tried per problem before giving up on it. */
const MUTANT_TRIES = 8;

export async function buildMemories(set: MbppSet, seed: number, sandbox: Sandbox, contaminate = true): Promise<Memories> {
  const random = seededRandom(seed * 7919 + 1);
  const score = () => Math.round(between(random, ...EVAL_RANGE) * 10) / 10;
  const S1: StoredRun[] = set.problems.map((p) => ({ task: p.phrasings[0], code: p.solution, eval_score: score(), kind: 'original', problem: p.id }));

  const contaminated: StoredRun[] = [];
  for (const { a, b } of set.hardNegatives) {
    if (random() >= 0.5) continue;
    const [x, y] = random() < 0.5 ? [set.byId.get(a)!, set.byId.get(b)!] : [set.byId.get(b)!, set.byId.get(a)!];
    const wordings = x.phrasings.slice(1).filter((w) => !mergesInto(w, x));
    if (wordings.length === 0) continue;
    const task = wordings[Math.floor(random() * wordings.length)];
    contaminated.push({ task, code: y.solution, eval_score: score(), kind: 'lookalike', problem: x.id });
  }
  const mutantSeed = seededRandom(seed * 104_729 + 3);
  // Near misses cost test runs: made only when the contaminated memory is asked for.
  const mutants = await Promise.all(set.problems.map(async (p) => {
    if (!contaminate || mergesInto(p.typo_variant, p)) return null;
    const code = await nearMiss(p, mutantSeed, sandbox);
    return code === null ? null : { task: p.typo_variant, code, eval_score: 0, kind: 'mutant' as const, problem: p.id };
  }));
  for (const m of mutants) if (m) contaminated.push({ ...m, eval_score: score() });

  const absent = new Set<string>();
  const partners = new Set<string>();
  for (const { a, b } of shuffled(set.hardNegatives, random)) {
    if (random() >= 0.5) continue;
    const [gone, stays] = random() < 0.5 ? [a, b] : [b, a];
    // A partner must stay stored, and a left-out problem is nobody's partner.
    if (absent.has(stays) || partners.has(gone) || absent.has(gone)) continue;
    absent.add(gone);
    partners.add(stays);
  }
  return { S1, S2: [...S1, ...contaminated], S3: S1.filter((r) => !absent.has(r.problem)), absent, partners };
}

/** Whether learn would merge `wording` into the problem's own stored pattern (same words, same order). */
function mergesInto(wording: string, p: MbppProblem): boolean {
  return sameWording(taskWords(wording), taskWords(p.phrasings[0]));
}

/** One-token edits a hurried agent makes (each applied at one occurrence). */
const EDITS: [RegExp, string][] = [
  [/<=/g, '<'], [/>=/g, '>'], [/(?<![<>=!])<(?![<=])/g, '<='], [/(?<![<>=!-])>(?![>=])/g, '>='],
  [/\bmax\b/g, 'min'], [/\bmin\b/g, 'max'], [/\+ ?1\b/g, '+ 2'], [/- ?1\b/g, '- 2'], [/==/g, '!='],
  [/\band\b/g, 'or'], [/\bTrue\b/g, 'False'], [/\bFalse\b/g, 'True'], [/\b0\b/g, '1'], [/\bsorted\(/g, 'list('],
];

/** Every one-token mutant of `code` (one edit at one place). */
export function mutantsOf(code: string): string[] {
  const out = new Set<string>();
  for (const [pattern, replacement] of EDITS) {
    for (const m of code.matchAll(pattern)) {
      const at = m.index;
      out.add(code.slice(0, at) + m[0].replace(new RegExp(pattern.source), replacement) + code.slice(at + m[0].length));
    }
  }
  out.delete(code);
  return [...out];
}

/** A mutant of the problem's solution that passes its first test and fails another (null: none found). */
async function nearMiss(p: MbppProblem, random: () => number, sandbox: Sandbox): Promise<string | null> {
  const tries = shuffled(mutantsOf(p.solution), random).slice(0, MUTANT_TRIES);
  for (const code of tries) {
    const v = await sandbox.verdict(code, p);
    if (v.first_passed && !v.passed) return code;
  }
  return null;
}

/** The asks of one stream round: [problem, wording] pairs in order. */
export type Ask = { problem: MbppProblem; wording: string };

/** Stream R, one round: every non-original wording once, in a seeded order per round. */
export function repeatRound(set: MbppSet, seed: number, round: number): Ask[] {
  const asks = set.problems.flatMap((problem) => askedWordings(problem).map((wording) => ({ problem, wording })));
  return shuffled(asks, seededRandom(seed * 31 + round));
}

/** Stream N, round e (1-based): the e-th asked wording of each problem that has one. */
export function newWordingRound(set: MbppSet, seed: number, round: number): Ask[] {
  const asks = set.problems.flatMap((problem) => {
    const w = askedWordings(problem)[round - 1];
    return w === undefined ? [] : [{ problem, wording: w }];
  });
  return shuffled(asks, seededRandom(seed * 37 + round));
}

/** Rounds stream N has: the most asked wordings any problem has. */
export function newWordingRounds(set: MbppSet): number {
  return Math.max(...set.problems.map((p) => askedWordings(p).length));
}
