/**
 * Work in bounded slices: a recall over thousands of candidates must not hold
 * the event loop for more than a few milliseconds at a time, so each of its per-candidate
 * stages runs over ranges of candidates and hands the loop back between them. Pure: how the
 * loop is handed back (setImmediate) is the caller's `Pause`, so core stays free of I/O.
 */

/** Hands the event loop back (services and adapters pass setImmediate from node:timers/promises). */
export type Pause = () => Promise<void>;

/**
 * Units of work (one candidate through one stage; one task comparison) allowed between two
 * pauses: about a millisecond of this service's per-candidate work on a slow machine.
 */
export const WORK_PER_TURN = 256;

/**
 * A running count of work with a pause whenever a turn's share is spent. One per request:
 * its stages share the count, so a stage ending and the next one starting never add up to
 * more than one turn's work without a pause between them.
 */
export class WorkBudget {
  private used = 0;

  constructor(
    private readonly pause: Pause,
    readonly perTurn: number = WORK_PER_TURN,
  ) {}

  /** Counts `units` of work just done; true once this turn's share is spent (then call handBack). */
  charge(units: number): boolean {
    this.used += units;
    return this.used >= this.perTurn;
  }

  /** What is left of this turn's share (at most perTurn; zero or less once it is spent). */
  get room(): number {
    return this.perTurn - this.used;
  }

  /** Counts `units` of work just done; pauses once this turn's share is spent. */
  async spend(units: number): Promise<void> {
    if (this.charge(units)) await this.handBack();
  }

  /**
   * Runs `body` over [0, n) in ranges [from, to), each at most what is left of the turn's
   * share (`cost` units per item, at least one item per range), pausing in between.
   */
  async forRanges(n: number, body: (from: number, to: number) => void, cost = 1): Promise<void> {
    for (let from = 0; from < n; ) {
      if (this.used >= this.perTurn) await this.handBack();
      const room = Math.max(1, Math.floor((this.perTurn - this.used) / cost));
      const to = Math.min(n, from + room);
      body(from, to);
      this.used += (to - from) * cost;
      from = to;
    }
  }

  /** `fn` of every item, computed in ranges (see forRanges). */
  async map<T, U>(items: readonly T[], fn: (item: T, index: number) => U, cost = 1): Promise<U[]> {
    const out = new Array<U>(items.length);
    await this.forRanges(items.length, (from, to) => {
      for (let i = from; i < to; i++) out[i] = fn(items[i], i);
    }, cost);
    return out;
  }

  /** Pauses now and starts a new turn's share. */
  async handBack(): Promise<void> {
    this.used = 0;
    await this.pause();
  }
}

/**
 * `items` sorted by `compare` in slices: runs of at most one turn's share are sorted apiece
 * (`cost` units per item, for the comparisons), then merged lazily, so a caller that needs only
 * the first few pays little more than the runs. Runs are consecutive and equal items are taken
 * from the earlier run first, so the order is that of one stable sort of the whole list.
 */
export async function sortInSlices<T>(
  items: readonly T[], compare: (a: T, b: T) => number, budget: WorkBudget, cost = 2,
): Promise<MergedRuns<T>> {
  const runs: T[][] = [];
  await budget.forRanges(items.length, (from, to) => {
    runs.push(items.slice(from, to).sort(compare));
  }, cost);
  return new MergedRuns(runs, compare);
}

/** Sorted runs merged on demand: `next()` gives the smallest item left (a min-heap of run heads). */
export class MergedRuns<T> {
  private readonly at: number[];
  /** Indices of runs with items left, as a min-heap by their head items. */
  private readonly heap: number[];

  constructor(
    private readonly runs: T[][],
    private readonly compare: (a: T, b: T) => number,
  ) {
    this.at = runs.map(() => 0);
    this.heap = [];
    for (let r = 0; r < runs.length; r++) if (runs[r].length > 0) this.heap.push(r);
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  /** The next item in order, or undefined when all have been taken. */
  next(): T | undefined {
    if (this.heap.length === 0) return undefined;
    const r = this.heap[0];
    const item = this.runs[r][this.at[r]++];
    if (this.at[r] === this.runs[r].length) {
      const last = this.heap.pop()!;
      if (this.heap.length > 0) this.heap[0] = last;
    }
    if (this.heap.length > 0) this.down(0);
    return item;
  }

  /** Run a's head before run b's (equal heads: the earlier run first, as a stable sort keeps them). */
  private before(a: number, b: number): boolean {
    const order = this.compare(this.runs[a][this.at[a]], this.runs[b][this.at[b]]);
    return order < 0 || (order === 0 && a < b);
  }

  private down(i: number): void {
    const heap = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= heap.length) return;
      const c = l + 1 < heap.length && this.before(heap[l + 1], heap[l]) ? l + 1 : l;
      if (!this.before(heap[c], heap[i])) return;
      [heap[i], heap[c]] = [heap[c], heap[i]];
      i = c;
    }
  }
}
