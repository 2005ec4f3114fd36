import type { WorkBudget } from '../../../../core/slices.js';
import { TopRows } from './top-rows.js';

/**
 * Rows the kernels score per unit of a WorkBudget (core/slices.ts: about 4 µs on a slow
 * machine). Measured: 10,000 rows of 384 dimensions in about 0.3 ms as int8, about 1 ms as
 * floats, so 32 rows per unit errs on the side of shorter turns. A kernel call itself, and each
 * row kept among the best (the filter, the heap), count one unit.
 */
export const SCAN_ROWS_PER_UNIT = 32;
/**
 * Sliced passes a search makes before it gives up (the index then scans in one go): a pass is
 * repeated only when a row it had kept was deleted or rewritten while the loop was handed back
 * and it had already let go of the rows that would replace it (see SlicedScan).
 */
const SLICED_PASSES = 3;
/** Copying out one kept row: a fraction of a unit. */
const COPY_COST = 0.25;

/** A search's candidate rows, copied out of the index (parallel arrays, unordered). */
export interface Candidates<T> {
  ids: string[];
  items: T[];
  scores: Float64Array;
}

/**
 * What a sliced search reads of the vector index: its rows as they are now (they change while
 * the loop is handed back; `ids` and `items` are the index's own arrays, row r's at r).
 */
export interface ScanRows<T> {
  count(): number;
  readonly ids: readonly string[];
  readonly items: readonly T[];
  rowOf(id: string): number | undefined;
  /** Throws as a new search would when `unit` no longer has the rows' dimension. */
  checkDimension(unit: Float32Array): void;
  /** Scores of rows [from, to) (float kernel when `exact`, else int8), in scratch valid until the next call. */
  scoreRows(unit: Float32Array, from: number, to: number, exact: boolean): Float32Array;
  /** Exact scores of the given rows (float kernel), in their order. */
  exactScores(unit: Float32Array, rows: ArrayLike<number>): Float64Array;
}

/** A sliced pass's best rows, and which of them are still fresh (by position in `top`). */
interface Kept<T> {
  top: TopRows<T>;
  fresh: (i: number) => boolean;
}

/**
 * A search scanning the rows in blocks, handing the loop back in between (`searchInSlices`).
 * Writes made meanwhile reach it through the index (`noteRewrite`, `noteRemove`), so that
 * every row present at the end is scored exactly once with its current vector:
 * - rows [0, cursor) have been scanned. A new row goes at the end (>= cursor): scanned later.
 * - a row rewritten below the cursor is scanned again (`revisit`), its earlier entry stale.
 * - a delete moves the last row into the hole: when that carries an unscanned row below the
 *   cursor, it is revisited; the deleted row's entry is stale.
 * An entry is stale when its id was invalidated after it was scored (`seq`, a count of the
 * writes this scan has seen). Stale entries are dropped; if the heap had also let rows go for
 * lack of room, one of those might now belong in the answer, and the pass is made again.
 */
interface SlicedScan {
  cursor: number;
  seq: number;
  invalidated: Map<string, number>;
  revisit: Set<string>;
  /** Every row was dropped meanwhile (a new dimension): the pass is void. */
  reset: boolean;
}

/**
 * The vector index's searches in slices (VectorIndex.searchInSlices): each scans the rows in
 * blocks, handing the loop back in between, and learns of the writes made meanwhile through
 * `noteRewrite`, `noteRemove` and `noteReshape`, which the index calls before each change.
 */
export class SlicedScans<T> {
  /** Sliced searches under way. */
  private readonly scans = new Set<SlicedScan>();

  constructor(private readonly rows: ScanRows<T>) {}

  /** Sliced searches under way (tests write while one is scanning). */
  get count(): number {
    return this.scans.size;
  }

  /**
   * The best `keep` rows among those `accept` admits, unordered: with their float scores when
   * `exact`, else chosen by int8 score and then re-scored exactly. Null when writes spoiled
   * every pass (the caller then searches in one go).
   */
  async candidates(unit: Float32Array, keep: number, exact: boolean, accept: ((item: T) => boolean) | undefined, budget: WorkBudget): Promise<Candidates<T> | null> {
    for (let pass = 1; pass <= SLICED_PASSES; pass++) {
      if (this.rows.count() > 0) this.rows.checkDimension(unit);
      const kept = await this.scanInSlices(unit, keep, exact, accept, budget);
      if (kept === null) continue;
      return exact ? this.copiedInSlices(kept, budget) : this.rescoredInSlices(unit, kept, budget);
    }
    return null;
  }

  /** Every row is about to be dropped (a new dimension): the passes under way are void. */
  noteReshape(): void {
    for (const scan of this.scans) scan.reset = true;
  }

  /**
   * One sliced pass: the best `keep` rows (float scores when `exact`, else int8), unordered,
   * or null when a write made the pass incomplete (SlicedScan).
   */
  private async scanInSlices(unit: Float32Array, keep: number, exact: boolean, accept: ((item: T) => boolean) | undefined, budget: WorkBudget): Promise<Kept<T> | null> {
    const scan: SlicedScan = { cursor: 0, seq: 0, invalidated: new Map(), revisit: new Set(), reset: false };
    const top = new TopRows<T>(keep);
    const fresh = (id: string, seq: number) => (scan.invalidated.get(id) ?? -1) <= seq;
    /**
     * Offers rows [from, to) to the heap, `scores[j]` being row from + j's. The rows are read
     * from the index's own arrays until the first pause; what is left is copied just before it
     * (rows may move, and the scratch be reused, while the loop is handed back).
     */
    const offer = async (scores: Float32Array, from: number, to: number, seq: number) => {
      const n = to - from;
      let [sc, ids, items] = [scores, this.rows.ids, this.rows.items];
      let [scoreAt, rowAt] = [0, from]; // row from + j is sc[scoreAt + j], ids[rowAt + j]
      // Most rows score below the worst kept one: one number compare skips them.
      let floor = top.floor;
      for (let j = 0; j < n; j++) {
        if (sc[scoreAt + j] < floor) {
          top.refuse();
          continue;
        }
        const id = ids[rowAt + j];
        if (!top.admits(sc[scoreAt + j], id) || !fresh(id, seq)) continue;
        if (accept !== undefined && !accept(items[rowAt + j])) continue;
        top.offer(sc[scoreAt + j], id, items[rowAt + j], seq);
        floor = top.floor;
        if (!budget.charge(1)) continue;
        if (ids === this.rows.ids && j + 1 < n) {
          [sc, ids, items] = [sc.slice(scoreAt + j + 1, scoreAt + n), ids.slice(rowAt + j + 1, rowAt + n), items.slice(rowAt + j + 1, rowAt + n)];
          scoreAt = rowAt = -(j + 1);
        }
        await this.pauseScan(unit, budget);
      }
    };
    this.scans.add(scan);
    try {
      for (;;) {
        if (budget.room <= 1) await this.pauseScan(unit, budget);
        // Rows rewritten or moved below the cursor while the loop was handed back.
        while (scan.revisit.size > 0) {
          const ids = [...scan.revisit];
          scan.revisit.clear();
          for (const id of ids) {
            if (budget.room <= 1) await this.pauseScan(unit, budget);
            // Resolved now: rows may have moved during the pause just made.
            const row = this.rows.rowOf(id);
            if (row === undefined || row >= scan.cursor) continue;
            const score = this.rows.scoreRows(unit, row, row + 1, exact);
            budget.charge(1 + 1 / SCAN_ROWS_PER_UNIT);
            await offer(score, row, row + 1, scan.seq);
          }
        }
        if (scan.cursor >= this.rows.count()) break;
        const from = scan.cursor;
        const to = Math.min(this.rows.count(), from + Math.max(1, Math.floor((budget.room - 1) * SCAN_ROWS_PER_UNIT)));
        const scores = this.rows.scoreRows(unit, from, to, exact);
        scan.cursor = to;
        budget.charge(1 + (to - from) / SCAN_ROWS_PER_UNIT);
        await offer(scores, from, to, scan.seq);
      }
    } finally {
      this.scans.delete(scan);
    }
    let stale = false;
    for (let i = 0; i < top.size && !stale; i++) stale = !fresh(top.ids[i], top.seqs[i]);
    return scan.reset || (stale && top.evicted) ? null : { top, fresh: (i) => fresh(top.ids[i], top.seqs[i]) };
  }

  /** The kept rows (fresh ones only) as candidates, copied in slices. */
  private async copiedInSlices({ top, fresh }: Kept<T>, budget: WorkBudget): Promise<Candidates<T>> {
    const ids: string[] = [];
    const items: T[] = [];
    const scores: number[] = [];
    await budget.forRanges(top.size, (from, to) => {
      for (let i = from; i < to; i++) {
        if (!fresh(i)) continue;
        ids.push(top.ids[i]);
        items.push(top.items[i]);
        scores.push(top.scores[i]);
      }
    }, COPY_COST);
    return { ids, items, scores: Float64Array.from(scores) };
  }

  /** Each int8 candidate's exact score from the float rows, in slices; deleted ones drop out. */
  private async rescoredInSlices(unit: Float32Array, { top, fresh }: Kept<T>, budget: WorkBudget): Promise<Candidates<T>> {
    const ids: string[] = [];
    const items: T[] = [];
    const scores: number[] = [];
    await budget.forRanges(top.size, (from, to) => {
      if (this.rows.count() === 0) return;
      this.rows.checkDimension(unit);
      // Rows looked up per slice: they may have moved while the loop was handed back.
      const kept: number[] = [];
      const rows: number[] = [];
      for (let i = from; i < to; i++) {
        const row = fresh(i) ? this.rows.rowOf(top.ids[i]) : undefined;
        if (row === undefined) continue;
        kept.push(i);
        rows.push(row);
      }
      const exact = this.rows.exactScores(unit, rows);
      for (let j = 0; j < kept.length; j++) {
        ids.push(top.ids[kept[j]]);
        items.push(top.items[kept[j]]);
        scores.push(exact[j]);
      }
    }, 1 + 1 / SCAN_ROWS_PER_UNIT);
    return { ids, items, scores: Float64Array.from(scores) };
  }

  /** Hands the loop back in a sliced scan; the index may have changed shape meanwhile. */
  private async pauseScan(unit: Float32Array, budget: WorkBudget): Promise<void> {
    await budget.handBack();
    if (this.rows.count() > 0) this.rows.checkDimension(unit);
  }

  /** A row about to be rewritten: a sliced scan that already passed it scans it again. */
  noteRewrite(id: string, row: number): void {
    for (const scan of this.scans) {
      if (row >= scan.cursor) continue;
      scan.invalidated.set(id, ++scan.seq);
      scan.revisit.add(id);
    }
  }

  /** Row `row` (of `id`) about to be deleted, the last row moving into it (see SlicedScan). */
  noteRemove(id: string, row: number): void {
    const last = this.rows.count() - 1;
    for (const scan of this.scans) {
      scan.invalidated.set(id, ++scan.seq);
      if (row < scan.cursor && last >= scan.cursor) scan.revisit.add(this.rows.ids[last]);
      scan.cursor = Math.min(scan.cursor, last);
    }
  }

}
