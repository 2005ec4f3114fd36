import { ValidationError } from './errors.js';
import { tokenSet } from './text.js';

/** Recall's dedup cut-off: tasks with token Jaccard strictly above this are near-duplicates. */
export const DEDUP_JACCARD_THRESHOLD = 0.7;
/**
 * With the code known (hybrid recall), two candidates whose tasks are near-duplicates but not
 * the same text are folded only when their code terms' Jaccard is strictly above this too: a
 * lookalike task ("decimal to octal" beside "octal to decimal") is a different problem with
 * different code, and folding it hid the right answer (docs/behavior.md "Recall" 4).
 */
export const DEDUP_CODE_JACCARD_THRESHOLD = 0.7;

/**
 * Recall widens its search (when dedup left the page short) up to this many candidates, or up
 * to its first fetch when a deep page needed more: past it, a page still short after dedup is
 * answered as it is. Without the cap, thousands of near-identical patterns made one recall
 * rank and deduplicate the whole scope again at every widening.
 */
export const MAX_WIDENED_CANDIDATES = 2_000;

/** The first fetch is this many times what the page needs; each widening multiplies it by WIDEN. */
const OVERFETCH = 3;
const WIDEN = 4;
/**
 * A floor under the first fetch, so small pages still leave eval weighting and dedup room to
 * reorder and thin the candidates. Kept small: an HNSW walk in PostgreSQL costs more the
 * larger k is (the JSON scan costs the same for any k).
 */
export const MIN_FETCH = 20;

/** Recall's first candidate fetch for a page that needs `need` survivors (cosine and hybrid alike). */
export function firstFetch(need: number): number {
  return Math.max(MIN_FETCH, (need + 1) * OVERFETCH);
}

/** The next, wider candidate fetch after `k`, or null once the cap is reached (see above). */
export function widenedFetch(k: number, first: number): number | null {
  const cap = Math.max(MAX_WIDENED_CANDIDATES, first);
  return k >= cap ? null : Math.min(k * WIDEN, cap);
}

/**
 * Near-duplicate filter over a ranked stream (best first): an item is kept unless its task is a
 * near-duplicate of an item kept before it. Each item is compared with the kept items only,
 * never with the ones dropped, so the work is at most (items offered) × (items kept) Jaccard
 * comparisons, and the kept items are bounded by the caller's page. `comparisons` counts them,
 * so a caller can pause between slices of work.
 */
export class NearDuplicateFilter<T> {
  /** Token-set comparisons made so far. */
  comparisons = 0;
  private readonly kept: T[] = [];
  private readonly keptTokens: Set<string>[] = [];
  /** Each kept item's code terms as a set, made on its first near-duplicate task (rare). */
  private readonly keptCode: (Set<string> | undefined)[] = [];

  /**
   * `codeOf` (hybrid recall: the candidate's code terms, core/code-terms.ts) makes the code a
   * second condition: tasks that are near-duplicates but not the same text must also share
   * their code (DEDUP_CODE_JACCARD_THRESHOLD). Without it, or for an item it answers undefined
   * for, the task alone decides.
   */
  constructor(
    private readonly taskOf: (item: T) => string,
    private readonly threshold = DEDUP_JACCARD_THRESHOLD,
    private readonly codeOf?: (item: T) => string | undefined,
  ) {}

  /** Offers the next item in rank order; true when it was kept. */
  offer(item: T): boolean {
    const tokens = tokenSet(this.taskOf(item));
    let code: Set<string> | null | undefined;
    for (let i = 0; i < this.keptTokens.length; i++) {
      this.comparisons++;
      if (!nearDuplicateSets(tokens, this.keptTokens[i], this.threshold)) continue;
      if (code === undefined) code = this.codeSetOf(item);
      if (this.sameProblem(item, i, code)) return false;
    }
    this.kept.push(item);
    this.keptTokens.push(tokens);
    this.keptCode.push(code ?? undefined);
    return true;
  }

  /** Near-duplicate tasks: the same problem when the texts are equal, or the code is known on neither side, or it agrees. */
  private sameProblem(item: T, keptAt: number, code: Set<string> | null): boolean {
    const other = this.kept[keptAt];
    if (code === null || this.taskOf(item).trim().toLowerCase() === this.taskOf(other).trim().toLowerCase()) return true;
    const otherCode = (this.keptCode[keptAt] ??= this.codeSetOf(other) ?? undefined);
    if (otherCode === undefined) return true;
    // Both without code terms: nothing tells them apart.
    if (code.size === 0 && otherCode.size === 0) return true;
    return nearDuplicateSets(code, otherCode, DEDUP_CODE_JACCARD_THRESHOLD);
  }

  private codeSetOf(item: T): Set<string> | null {
    const code = this.codeOf?.(item);
    return code === undefined ? null : tokenSet(code);
  }

  /** How many items were kept. */
  get size(): number {
    return this.kept.length;
  }

  /** The kept items, in the order offered. */
  items(): T[] {
    return [...this.kept];
  }
}

/**
 * Token Jaccard of `a` and `b` > threshold, answered as soon as it is decided: Jaccard =
 * shared / (|a| + |b| - shared) exceeds t exactly when shared > t (|a| + |b|) / (1 + t), so the
 * scan stops once too many tokens of the smaller set are missing from the larger one. Sets with
 * no tokens are never near-duplicates (as jaccardOfSets gives them 0).
 */
export function nearDuplicateSets(a: ReadonlySet<string>, b: ReadonlySet<string>, threshold: number): boolean {
  if (a.size === 0 || b.size === 0) return false;
  // Not destructured from a pair: recall compares each candidate with every kept match, and
  // the pair arrays were a good share of a deep page's garbage.
  const small = a.size <= b.size ? a : b;
  const large = small === a ? b : a;
  // Jaccard ≤ |small| / |large|: sets of too different sizes cannot be near-duplicates.
  if (small.size <= threshold * large.size) return false;
  const needed = (threshold * (a.size + b.size)) / (1 + threshold);
  let missesLeft = small.size - needed;
  let shared = 0;
  for (const t of small) {
    if (large.has(t)) shared++;
    else if (--missesLeft <= 0) return false;
  }
  return shared / (a.size + b.size - shared) > threshold;
}

/**
 * Collapse near-duplicate tasks in an already ranked list: walking in rank order, an item is
 * dropped when a better-ranked kept item is a near-duplicate of it (NearDuplicateFilter; with
 * `codeOf`, of the same problem by its code too).
 * Survivors stay in their original order and are pairwise not near-duplicates.
 *
 * `maxKept` lets a caller that needs only the first N survivors stop once N are kept.
 */
export function dedupeByTask<T>(
  ranked: T[],
  taskOf: (t: T) => string,
  threshold = DEDUP_JACCARD_THRESHOLD,
  maxKept = Number.POSITIVE_INFINITY,
  codeOf?: (t: T) => string | undefined,
): T[] {
  const filter = new NearDuplicateFilter(taskOf, threshold, codeOf);
  for (const item of ranked) {
    if (filter.size >= maxKept) break;
    filter.offer(item);
  }
  return filter.items();
}

/**
 * The deepest page a deduplicated recall serves: offset + limit at most this. Dedup compares
 * each candidate with every match kept so far, so its work grows with the page's end times the
 * candidates fetched for it: at offset 9,950 over 12,000 distinct patterns one recall took 6.8 s
 * of CPU, the same page without dedup 0.1 s, and a page ending here about that 0.1 s
 * (`npm run bench -- --dedup`). Deeper deduplicated pages answer 422 naming `offset`.
 */
export const MAX_DEDUP_PAGE_END = 1_000;

/** 422 naming `offset` for a deduplicated page that ends past MAX_DEDUP_PAGE_END; deeper pages without dedup are served. */
export function assertDedupPageWithinCap(page: { offset: number; limit: number; deduplicate: boolean }): void {
  if (!page.deduplicate || page.offset + page.limit <= MAX_DEDUP_PAGE_END) return;
  const deepest = MAX_DEDUP_PAGE_END - page.limit;
  throw new ValidationError(
    `a deduplicated recall serves pages up to offset + limit = ${MAX_DEDUP_PAGE_END} (offset ≤ ${deepest} at limit ${page.limit}); ` +
      'send deduplicate: false for deeper pages',
    [{ path: 'offset', message: `at most ${deepest} with deduplicate on and limit ${page.limit}` }],
  );
}
