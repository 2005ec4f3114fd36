/**
 * The vector index's search order over candidates copied out of a scan (sliced-scans.ts
 * Candidates): higher score first, then the smaller id.
 */
import type { Candidates } from './sliced-scans.js';

export interface IndexHit<T> {
  id: string;
  item: T;
  score: number;
}

/** Search order over candidate positions: higher score first, then smaller id. */
export function byScoreThenId<T>(found: Candidates<T>, a: number, b: number): number {
  const ia = found.ids[a];
  const ib = found.ids[b];
  return found.scores[b] - found.scores[a] || (ia < ib ? -1 : ia > ib ? 1 : 0);
}

/** Every candidate's position, in search order (one sort, for the callers that order in one go). */
export function positionsInOrder<T>(found: Candidates<T>): number[] {
  return [...found.ids.keys()].sort((a, b) => byScoreThenId(found, a, b));
}

/**
 * The first k of positionsInOrder, by insertion into a sorted list of at most k: a search
 * re-scores max(4k, 64) candidates and keeps k, and most candidates rank below the k-th kept
 * one (one compare each) instead of taking part in a sort of them all.
 */
export function bestInOrder<T>(found: Candidates<T>, k: number): number[] {
  const best: number[] = [];
  for (let i = 0; i < found.ids.length; i++) {
    if (best.length === k && byScoreThenId(found, i, best[k - 1]) >= 0) continue;
    let at = best.length === k ? k - 1 : best.length;
    while (at > 0 && byScoreThenId(found, i, best[at - 1]) < 0) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = i;
  }
  return best;
}

export function hitOf<T>(found: Candidates<T>, i: number): IndexHit<T> {
  return { id: found.ids[i], item: found.items[i], score: found.scores[i] };
}
