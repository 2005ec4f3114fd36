import { createDots, STRIDE_ALIGN_FLOATS, wasm, type DotsFn, type WasmMemory } from './dot-kernel.js';
import { Int8Rows } from './int8-rows.js';
import { sortInSlices, type WorkBudget } from '../../../core/slices.js';
import { TopRows } from './top-rows.js';
import { selectTop, selectTopByBlocks } from './row-selection.js';

const PAGE_BYTES = 65536;
const MAX_PAGES = 65536; // 4 GiB: the wasm32 ceiling
const INITIAL_ROWS = 256;
/**
 * Candidates re-scored exactly per search: this many times k, and at least RESCORE_MIN. With
 * int8 rows the true top 10 was always among the first 64 candidates on the benchmark's
 * 10k and 100k stores (test/unit/vector-index-int8.test.ts checks recall@10 on clustered data).
 */
const RESCORE_FACTOR = 4;
const RESCORE_MIN = 64;
/** Below this many rows the float scan is cheap enough, and is exact by construction. */
const EXACT_SCAN_MAX_ROWS = 2048;
/**
 * Rows the kernels score per unit of a WorkBudget (core/slices.ts: about 4 µs on a slow
 * machine). Measured: 10,000 rows of 384 dimensions in about 0.3 ms as int8, about 1 ms as
 * floats, so 32 rows per unit errs on the side of shorter turns. A kernel call itself, and each
 * row kept among the best (the filter, the heap), count one unit.
 */
export const SCAN_ROWS_PER_UNIT = 32;
/**
 * A search whose estimated work (rows scanned, then candidates kept and re-scored) is at most
 * this many turns' share runs in one go (see searchInSlices).
 */
const ONE_GO_TURNS = 2;
/**
 * Sliced passes a search makes before it scans in one go: a pass is repeated only when a row it
 * had kept was deleted or rewritten while the loop was handed back and it had already let go
 * of the rows that would replace it (see SlicedScan).
 */
const SLICED_PASSES = 3;
/** Copying out one kept row: a fraction of a unit. */
const COPY_COST = 0.25;

export interface IndexHit<T> {
  id: string;
  item: T;
  score: number;
}

/** A search's candidate rows, copied out of the index (parallel arrays, unordered). */
interface Candidates<T> {
  ids: string[];
  items: T[];
  scores: Float64Array;
}

/** Search order over candidate positions: higher score first, then smaller id. */
function byScoreThenId<T>(found: Candidates<T>, a: number, b: number): number {
  const ia = found.ids[a];
  const ib = found.ids[b];
  return found.scores[b] - found.scores[a] || (ia < ib ? -1 : ia > ib ? 1 : 0);
}

/** Every candidate's position, in search order (one sort, for the callers that order in one go). */
function positionsInOrder<T>(found: Candidates<T>): number[] {
  return [...found.ids.keys()].sort((a, b) => byScoreThenId(found, a, b));
}

/**
 * The first k of positionsInOrder, by insertion into a sorted list of at most k: a search
 * re-scores max(4k, 64) candidates and keeps k, and most candidates rank below the k-th kept
 * one (one compare each) instead of taking part in a sort of them all.
 */
function bestInOrder<T>(found: Candidates<T>, k: number): number[] {
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

function hitOf<T>(found: Candidates<T>, i: number): IndexHit<T> {
  return { id: found.ids[i], item: found.items[i], score: found.scores[i] };
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
 * In-memory brute-force index of unit vectors, one scope each. Rows live contiguously in a
 * WebAssembly memory laid out as [query | rows × stride | scores scratch], so one kernel call
 * scores every row without allocating. Past EXACT_SCAN_MAX_ROWS a search scans an int8 copy
 * of the rows instead (Int8Rows: a quarter of the bytes, the scan being bound by memory
 * traffic) and re-scores its best candidates exactly from the float rows, so every returned
 * score is the exact cosine the float scan would give. Deleting moves the last row into the hole, keeping the
 * matrix dense. `T` is the item the filter looks at (the pattern record), kept per row so the
 * filter runs inside the scan without a map lookup.
 */
export class VectorIndex<T> {
  private dim = 0;
  private strideFloats = 0;
  private capacity = 0;
  private size = 0;
  private memory: WasmMemory | null = null;
  /** View of the whole memory; replaced after every grow (growing detaches old views). */
  private floats: Float32Array | null = null;
  private dots: DotsFn | null = null;
  private readonly rowIds: string[] = [];
  private readonly rowItems: T[] = [];
  private readonly rowOf = new Map<string, number>();
  private readonly int8: Int8Rows;
  /** Sliced searches under way (they hand the loop back, and writes may come in between). */
  private readonly scans = new Set<SlicedScan>();

  constructor(private readonly preferJsKernel = false) {
    this.int8 = new Int8Rows(preferJsKernel);
  }

  get dimension(): number {
    return this.size === 0 ? 0 : this.dim;
  }

  get count(): number {
    return this.size;
  }

  /** Sliced searches under way (tests write while one is scanning). */
  get scanning(): number {
    return this.scans.size;
  }

  has(id: string): boolean {
    return this.rowOf.has(id);
  }

  /** Adds or replaces the row of `id`. `unit` must already be normalised. */
  set(id: string, item: T, unit: Float32Array): void {
    const at = this.rowFor(id, item, unit.length);
    const f = this.floats!;
    f.set(unit, at);
    f.fill(0, at + unit.length, at + this.strideFloats);
    this.int8.set(this.rowOf.get(id)!, unit);
  }

  /**
   * Same as `set`, from the base64 of a stored unit vector, decoded straight into the matrix
   * (loading 100k vectors this way avoids 300k temporary buffers).
   */
  setEncoded(id: string, item: T, base64: string): void {
    const bytes = Buffer.byteLength(base64, 'base64');
    if (bytes === 0 || bytes % 4 !== 0) throw new Error(`corrupt vector of pattern ${id}`);
    const dim = bytes / 4;
    const at = this.rowFor(id, item, dim);
    Buffer.from(this.memory!.buffer, at * 4, bytes).write(base64, 'base64');
    this.floats!.fill(0, at + dim, at + this.strideFloats);
    this.int8.set(this.rowOf.get(id)!, this.floats!.subarray(at, at + dim));
  }

  /** The float offset of the row of `id`, added when new (reshaping on a new dimension). */
  private rowFor(id: string, item: T, dim: number): number {
    if (this.size === 0 || dim !== this.dim) this.reshape(dim);
    let row = this.rowOf.get(id);
    if (row !== undefined) this.noteRewrite(id, row);
    if (row === undefined) {
      this.ensureCapacity(this.size + 1);
      row = this.size++;
      this.rowOf.set(id, row);
      this.rowIds[row] = id;
    }
    this.rowItems[row] = item;
    return this.matrixOffsetFloats() + row * this.strideFloats;
  }

  /** A view of the stored unit vector of `id` (valid until the next mutation), or null. */
  vectorOf(id: string): Float32Array | null {
    const row = this.rowOf.get(id);
    if (row === undefined) return null;
    const at = this.matrixOffsetFloats() + row * this.strideFloats;
    return new Float32Array(this.memory!.buffer, at * 4, this.dim);
  }

  /** Replaces the filter item of a row (the record changed, the vector did not). */
  setItem(id: string, item: T): void {
    const row = this.rowOf.get(id);
    if (row !== undefined) this.rowItems[row] = item;
  }

  remove(id: string): void {
    const row = this.rowOf.get(id);
    if (row === undefined) return;
    this.noteRemove(id, row);
    const last = this.size - 1;
    if (row !== last) {
      const f = this.floats!;
      const base = this.matrixOffsetFloats();
      f.copyWithin(base + row * this.strideFloats, base + last * this.strideFloats, base + (last + 1) * this.strideFloats);
      this.int8.move(last, row);
      const movedId = this.rowIds[last];
      this.rowIds[row] = movedId;
      this.rowItems[row] = this.rowItems[last];
      this.rowOf.set(movedId, row);
    }
    this.rowIds.length = last;
    this.rowItems.length = last;
    this.rowOf.delete(id);
    this.size = last;
  }

  /**
   * The k best rows by dot product with `unit` among those `accept` admits, best first (ties:
   * smaller id first). The filter is consulted only for rows that would enter the top k.
   */
  search(unit: Float32Array, k: number, accept?: (item: T) => boolean): IndexHit<T>[] {
    const found = this.candidates(unit, k, accept);
    return bestInOrder(found, k).map((i) => hitOf(found, i));
  }

  /**
   * `search` in slices of `budget`: the scan (blocks of rows), the selection of the best rows,
   * the exact re-scoring and the ordering all hand the loop back once a turn's share is spent,
   * and a write made meanwhile is seen (SlicedScan). Without writes in between, the same hits,
   * scores and order as `search`.
   */
  async searchInSlices(unit: Float32Array, k: number, accept: ((item: T) => boolean) | undefined, budget: WorkBudget): Promise<IndexHit<T>[]> {
    // A small search (a default page over some thousands of rows) runs in one go: it takes a
    // fraction of a millisecond, less than the slicing itself costs. Its work is still charged.
    const work = this.size / SCAN_ROWS_PER_UNIT + 2 * Math.max(RESCORE_MIN, RESCORE_FACTOR * k);
    if (work <= ONE_GO_TURNS * budget.perTurn) {
      const hits = this.search(unit, k, accept);
      if (budget.charge(work)) await budget.handBack();
      return hits;
    }
    const found = await this.candidatesInSlices(unit, k, accept, budget);
    const order = await sortInSlices([...found.ids.keys()], (a, b) => byScoreThenId(found, a, b), budget);
    const hits: IndexHit<T>[] = [];
    for (let i = order.next(); i !== undefined && hits.length < k; i = order.next()) {
      hits.push(hitOf(found, i));
      if (budget.charge(1)) await budget.handBack();
    }
    return hits;
  }

  /** The float scan of every row: what `search` approximates past EXACT_SCAN_MAX_ROWS (tests compare the two). */
  searchExact(unit: Float32Array, k: number, accept?: (item: T) => boolean): IndexHit<T>[] {
    if (this.size === 0 || k <= 0) return [];
    this.checkDimension(unit);
    this.floats!.set(unit, 0);
    this.floats!.fill(0, unit.length, this.strideFloats);
    const found = this.exactScan(k, accept);
    const order = positionsInOrder(found);
    return order.map((i) => hitOf(found, i));
  }

  /**
   * `search`'s candidates, unordered, copied out of the shared scratch memory: at most k rows,
   * with their exact scores. Candidates from the int8 copy past EXACT_SCAN_MAX_ROWS, then each
   * one's exact score from the same float kernel (one row per call), so scores and order match
   * the float scan's.
   */
  private candidates(unit: Float32Array, k: number, accept?: (item: T) => boolean): Candidates<T> {
    if (this.size === 0 || k <= 0) return { ids: [], items: [], scores: new Float64Array(0) };
    this.checkDimension(unit);
    const f = this.loadQuery(unit);
    const matrixBytes = this.matrixOffsetFloats() * 4;
    const scoresFloats = this.scoresOffsetFloats();
    const rescore = Math.max(RESCORE_MIN, RESCORE_FACTOR * k);
    if (this.size <= Math.max(EXACT_SCAN_MAX_ROWS, rescore)) return this.exactScan(k, accept);
    const approx = this.int8.scores(unit, this.size);
    // Unfiltered, whole blocks of rows below the k-th best block maximum are skipped unread.
    const candidates = accept === undefined
      ? selectTopByBlocks(approx, this.int8.blockMaxima(this.size), rescore, this.rowIds)
      : selectTop(approx, rescore, this.rowIds, this.rowItems, accept);
    const exact = new Float32Array(f.buffer, scoresFloats * 4, candidates.rows.length);
    for (let i = 0; i < candidates.rows.length; i++) {
      this.dots!(0, matrixBytes + candidates.rows[i] * this.strideFloats * 4, 1, this.strideFloats * 4, (scoresFloats + i) * 4);
    }
    // The rescored candidates may be more than k: ordering keeps the k best.
    return this.copied(candidates.rows, new Float64Array(exact));
  }

  /** `candidates`, computed in slices of `budget` (see SlicedScan). */
  private async candidatesInSlices(unit: Float32Array, k: number, accept: ((item: T) => boolean) | undefined, budget: WorkBudget): Promise<Candidates<T>> {
    if (this.size === 0 || k <= 0) return { ids: [], items: [], scores: new Float64Array(0) };
    this.checkDimension(unit);
    const rescore = Math.max(RESCORE_MIN, RESCORE_FACTOR * k);
    const exact = this.size <= Math.max(EXACT_SCAN_MAX_ROWS, rescore);
    for (let pass = 1; pass <= SLICED_PASSES; pass++) {
      if (this.size > 0) this.checkDimension(unit);
      // Exact: k, not the current size (rows added during the scan count too).
      const kept = await this.scanInSlices(unit, exact ? k : rescore, exact, accept, budget);
      if (kept === null) continue;
      return exact ? this.copiedInSlices(kept, budget) : this.rescoredInSlices(unit, kept, budget);
    }
    // Writes kept spoiling the passes: one scan without handing the loop back.
    this.checkDimension(unit);
    return this.candidates(unit, k, accept);
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
      let [sc, ids, items] = [scores, this.rowIds, this.rowItems];
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
        if (ids === this.rowIds && j + 1 < n) {
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
            const row = this.rowOf.get(id);
            if (row === undefined || row >= scan.cursor) continue;
            const score = this.scoreRows(unit, row, row + 1, exact);
            budget.charge(1 + 1 / SCAN_ROWS_PER_UNIT);
            await offer(score, row, row + 1, scan.seq);
          }
        }
        if (scan.cursor >= this.size) break;
        const from = scan.cursor;
        const to = Math.min(this.size, from + Math.max(1, Math.floor((budget.room - 1) * SCAN_ROWS_PER_UNIT)));
        const scores = this.scoreRows(unit, from, to, exact);
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

  /** Hands the loop back in a sliced scan; the index may have changed shape meanwhile. */
  private async pauseScan(unit: Float32Array, budget: WorkBudget): Promise<void> {
    await budget.handBack();
    if (this.size > 0) this.checkDimension(unit);
  }

  /**
   * Scores of rows [from, to) with `unit` (float kernel when `exact`, else int8), in a scratch
   * array valid until the next search. The query is written again each time: another search
   * may have used the query slot while the loop was handed back.
   */
  private scoreRows(unit: Float32Array, from: number, to: number, exact: boolean): Float32Array {
    if (!exact) return this.int8.scoresOf(unit, from, to);
    const f = this.loadQuery(unit);
    const scoresFloats = this.scoresOffsetFloats();
    this.dots!(0, (this.matrixOffsetFloats() + from * this.strideFloats) * 4, to - from, this.strideFloats * 4, scoresFloats * 4);
    return f.subarray(scoresFloats, scoresFloats + (to - from));
  }

  /** Each int8 candidate's exact score from the float rows, in slices; deleted ones drop out. */
  private async rescoredInSlices(unit: Float32Array, { top, fresh }: Kept<T>, budget: WorkBudget): Promise<Candidates<T>> {
    const ids: string[] = [];
    const items: T[] = [];
    const scores: number[] = [];
    await budget.forRanges(top.size, (from, to) => {
      if (this.size === 0) return;
      this.checkDimension(unit);
      // Views and offsets read per slice: the memory may have grown while the loop was handed back.
      const f = this.loadQuery(unit);
      const matrixBytes = this.matrixOffsetFloats() * 4;
      const out = this.scoresOffsetFloats();
      for (let i = from; i < to; i++) {
        const row = fresh(i) ? this.rowOf.get(top.ids[i]) : undefined;
        if (row === undefined) continue;
        this.dots!(0, matrixBytes + row * this.strideFloats * 4, 1, this.strideFloats * 4, out * 4);
        ids.push(top.ids[i]);
        items.push(top.items[i]);
        scores.push(f[out]);
      }
    }, 1 + 1 / SCAN_ROWS_PER_UNIT);
    return { ids, items, scores: Float64Array.from(scores) };
  }

  /** A row about to be rewritten: a sliced scan that already passed it scans it again. */
  private noteRewrite(id: string, row: number): void {
    for (const scan of this.scans) {
      if (row >= scan.cursor) continue;
      scan.invalidated.set(id, ++scan.seq);
      scan.revisit.add(id);
    }
  }

  /** Row `row` (of `id`) about to be deleted, the last row moving into it (see SlicedScan). */
  private noteRemove(id: string, row: number): void {
    const last = this.size - 1;
    for (const scan of this.scans) {
      scan.invalidated.set(id, ++scan.seq);
      if (row < scan.cursor && last >= scan.cursor) scan.revisit.add(this.rowIds[last]);
      scan.cursor = Math.min(scan.cursor, last);
    }
  }

  /** Scores every row against the query already in the query slot; the best k, unordered. */
  private exactScan(k: number, accept?: (item: T) => boolean): Candidates<T> {
    const scoresFloats = this.scoresOffsetFloats();
    this.dots!(0, this.matrixOffsetFloats() * 4, this.size, this.strideFloats * 4, scoresFloats * 4);
    const scores = this.floats!.subarray(scoresFloats, scoresFloats + this.size);
    const top = selectTop(scores, Math.min(k, this.size), this.rowIds, this.rowItems, accept);
    return this.copied(top.rows, Float64Array.from(top.scores));
  }

  private copied(rows: Int32Array, scores: Float64Array): Candidates<T> {
    const ids = new Array<string>(rows.length);
    const items = new Array<T>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      ids[i] = this.rowIds[rows[i]];
      items[i] = this.rowItems[rows[i]];
    }
    return { ids, items, scores };
  }

  private checkDimension(unit: Float32Array): void {
    if (unit.length !== this.dim) {
      throw new Error(`query vector has ${unit.length} dimensions but the stored vectors have ${this.dim}; run \`service reindex\``);
    }
  }

  private matrixOffsetFloats(): number {
    return this.strideFloats; // the query slot comes first
  }

  /** Where the float kernel writes its scores: after the matrix's capacity. */
  private scoresOffsetFloats(): number {
    return this.matrixOffsetFloats() + this.capacity * this.strideFloats;
  }

  /** Writes the query into the query slot (zero-padded to the stride) and returns the float view. */
  private loadQuery(unit: Float32Array): Float32Array {
    const f = this.floats!;
    f.set(unit, 0);
    f.fill(0, unit.length, this.strideFloats);
    return f;
  }

  /** A new dimension (first row, or a reindex to another model) starts an empty matrix. */
  private reshape(dim: number): void {
    if (this.size > 0 || dim !== this.dim) for (const scan of this.scans) scan.reset = true;
    if (this.size > 0) {
      this.rowIds.length = 0;
      this.rowItems.length = 0;
      this.rowOf.clear();
      this.size = 0;
    }
    this.dim = dim;
    this.strideFloats = Math.ceil(dim / STRIDE_ALIGN_FLOATS) * STRIDE_ALIGN_FLOATS;
    this.capacity = 0;
    this.memory = null;
    this.floats = null;
    this.int8.reshape(dim);
    this.ensureCapacity(INITIAL_ROWS);
  }

  private ensureCapacity(rows: number): void {
    if (rows <= this.capacity && this.memory) return;
    let capacity = Math.max(this.capacity, INITIAL_ROWS);
    while (capacity < rows) capacity *= 2;
    // query + rows + one f32 score per row
    const bytes = (this.strideFloats + capacity * this.strideFloats + capacity) * 4;
    const pages = Math.ceil(bytes / PAGE_BYTES);
    if (pages > MAX_PAGES) {
      throw new Error(`vector index full: ${rows} vectors of ${this.dim} dimensions exceed 4 GiB; use PostgreSQL storage`);
    }
    if (!this.memory) {
      this.memory = new wasm.Memory({ initial: pages, maximum: MAX_PAGES });
      this.dots = createDots(this.memory, this.preferJsKernel);
    } else {
      const current = this.memory.buffer.byteLength / PAGE_BYTES;
      if (pages > current) this.memory.grow(pages - current);
    }
    this.floats = new Float32Array(this.memory.buffer);
    this.capacity = capacity;
    this.int8.ensureCapacity(capacity);
  }
}
