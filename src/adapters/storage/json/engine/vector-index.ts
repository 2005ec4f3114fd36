import { FloatRows } from './float-rows.js';
import { Int8Rows } from './int8-rows.js';
import { sortInSlices, type WorkBudget } from '../../../../core/slices.js';
import { selectFromThread, selectTop, selectTopByBlocks, type SelectedRows } from './row-selection.js';
import { SCAN_ROWS_PER_UNIT, SlicedScans, type Candidates } from './sliced-scans.js';
import { defaultScanThread, type ScanThread } from './scan-thread.js';
import { bestInOrder, byScoreThenId, hitOf, positionsInOrder, type IndexHit } from './hit-order.js';

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
 * A search whose estimated work (rows scanned, then candidates kept and re-scored) is at most
 * this many turns' share runs in one go (see searchInSlices).
 */
const ONE_GO_TURNS = 2;
/** searchInSlices calls under way in this process, over every index (ScanThread.wanted). */
let searchesUnderway = 0;

/**
 * In-memory brute-force index of unit vectors, one scope each. Rows live contiguously in a
 * WebAssembly memory (FloatRows), so one kernel call scores every row without allocating. Past EXACT_SCAN_MAX_ROWS a search scans an int8 copy
 * of the rows instead (Int8Rows: a quarter of the bytes, the scan being bound by memory
 * traffic) and re-scores its best candidates exactly from the float rows, so every returned
 * score is the exact cosine the float scan would give. Deleting moves the last row into the hole, keeping the
 * matrix dense. `T` is the item the filter looks at (the pattern record), kept per row so the
 * filter runs inside the scan without a map lookup.
 */
export class VectorIndex<T> {
  private dim = 0;
  private capacity = 0;
  private size = 0;
  private readonly floats: FloatRows;
  private readonly rowIds: string[] = [];
  private readonly rowItems: T[] = [];
  private readonly rowOf = new Map<string, number>();
  private readonly int8: Int8Rows;
  /** Sliced searches under way (they hand the loop back, and writes may come in between). */
  private readonly sliced: SlicedScans<T>;
  /**
   * Counts the changes to rows (added, rewritten, moved, removed, reshaped): a scan-thread
   * answer is used only when no change came between its request and its answer.
   */
  private rowChanges = 0;

  constructor(preferJsKernel = false, thread: ScanThread | null = defaultScanThread()) {
    this.floats = new FloatRows(preferJsKernel);
    this.int8 = new Int8Rows(preferJsKernel, thread);
    // The index's own row arrays, read live by the sliced scans (changed in place, never replaced).
    this.sliced = new SlicedScans<T>({
      count: () => this.size,
      ids: this.rowIds,
      items: this.rowItems,
      rowOf: (id) => this.rowOf.get(id),
      checkDimension: (unit) => this.checkDimension(unit),
      scoreRows: (unit, from, to, exact) => this.scoreRows(unit, from, to, exact),
      exactScores: (unit, rows) => this.floats.exactScores(unit, rows),
    });
  }

  get dimension(): number {
    return this.size === 0 ? 0 : this.dim;
  }

  get count(): number {
    return this.size;
  }

  /** Sliced searches under way (tests write while one is scanning). */
  get scanning(): number {
    return this.sliced.count;
  }

  has(id: string): boolean {
    return this.rowOf.has(id);
  }

  /** Adds or replaces the row of `id`. `unit` must already be normalised. */
  set(id: string, item: T, unit: Float32Array): void {
    const row = this.rowFor(id, item, unit.length);
    this.floats.set(row, unit);
    this.int8.set(row, unit);
  }

  /**
   * Same as `set`, from the base64 of a stored unit vector, decoded straight into the matrix
   * (loading 100k vectors this way avoids 300k temporary buffers).
   */
  setEncoded(id: string, item: T, base64: string): void {
    const bytes = Buffer.byteLength(base64, 'base64');
    if (bytes === 0 || bytes % 4 !== 0) throw new Error(`corrupt vector of pattern ${id}`);
    const row = this.rowFor(id, item, bytes / 4);
    this.int8.set(row, this.floats.setEncoded(row, base64));
  }

  /** The row of `id`, added when new (reshaping on a new dimension). */
  private rowFor(id: string, item: T, dim: number): number {
    this.rowChanges++;
    if (this.size === 0 || dim !== this.dim) this.reshape(dim);
    let row = this.rowOf.get(id);
    if (row !== undefined) this.sliced.noteRewrite(id, row);
    if (row === undefined) {
      this.ensureCapacity(this.size + 1);
      row = this.size++;
      this.rowOf.set(id, row);
      this.rowIds[row] = id;
    }
    this.rowItems[row] = item;
    return row;
  }

  /**
   * The cosine of unit vector `unit` with the row of each id, by the kernel that re-scores a
   * search's candidates (so a keyword-only candidate's cosine is taken as a nearest one's
   * is); 0 for an id without a row or a `unit` of another dimension (no neighbour by meaning).
   * Hybrid recall's keyword-only candidates: a JavaScript dot product of 384 dimensions cost
   * about 2 µs each on the main thread.
   */
  cosinesOf(unit: Float32Array, ids: readonly string[]): Float64Array {
    const out = new Float64Array(ids.length);
    if (this.size === 0 || unit.length !== this.dim) return out;
    const rows: number[] = [];
    const at: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const row = this.rowOf.get(ids[i]);
      if (row === undefined) continue;
      rows.push(row);
      at.push(i);
    }
    const scores = this.floats.exactScores(unit, rows);
    for (let j = 0; j < at.length; j++) out[at[j]] = scores[j];
    return out;
  }

  /**
   * Each id's dot products with every one of `units` (as cosinesOf gives them: 0 for an id
   * without a row or a unit of another dimension), one array per id in `ids`' order. The rows
   * are looked up once for all units, and each unit is one kernel pass over them: hybrid
   * recall's principal directions (core/components.ts) for a slice of its candidates.
   */
  dotsWith(units: readonly Float32Array[], ids: readonly string[]): number[][] {
    const out: number[][] = new Array(ids.length);
    for (let i = 0; i < ids.length; i++) out[i] = new Array<number>(units.length).fill(0);
    if (this.size === 0) return out;
    const rows: number[] = [];
    const at: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const row = this.rowOf.get(ids[i]);
      if (row === undefined) continue;
      rows.push(row);
      at.push(i);
    }
    if (rows.length === 0) return out;
    for (let u = 0; u < units.length; u++) {
      if (units[u].length !== this.dim) continue;
      const scores = this.floats.exactScores(units[u], rows);
      for (let j = 0; j < at.length; j++) out[at[j]][u] = scores[j];
    }
    return out;
  }

  /** A view of the stored unit vector of `id` (valid until the next mutation), or null. */
  vectorOf(id: string): Float32Array | null {
    const row = this.rowOf.get(id);
    return row === undefined ? null : this.floats.view(row);
  }

  /** Replaces the filter item of a row (the record changed, the vector did not). */
  setItem(id: string, item: T): void {
    const row = this.rowOf.get(id);
    if (row !== undefined) this.rowItems[row] = item;
  }

  remove(id: string): void {
    const row = this.rowOf.get(id);
    if (row === undefined) return;
    this.rowChanges++;
    this.sliced.noteRemove(id, row);
    const last = this.size - 1;
    if (row !== last) {
      this.floats.move(last, row);
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
   * and a write made meanwhile is seen (sliced-scans.ts). Without writes in between, the same hits,
   * scores and order as `search`.
   */
  async searchInSlices(unit: Float32Array, k: number, accept: ((item: T) => boolean) | undefined, budget: WorkBudget): Promise<IndexHit<T>[]> {
    searchesUnderway++;
    try {
      return await this.searchInSlicesHere(unit, k, accept, budget);
    } finally {
      searchesUnderway--;
    }
  }

  private async searchInSlicesHere(unit: Float32Array, k: number, accept: ((item: T) => boolean) | undefined, budget: WorkBudget): Promise<IndexHit<T>[]> {
    const threaded = await this.searchInThread(unit, k, accept, budget);
    if (threaded) return threaded;
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

  /**
   * `search` with the int8 scan run by the scan thread (scan-thread.ts) while this thread
   * serves other requests: the same candidates (the thread sends the rows at or above
   * selectTopByBlocks' floor; the choice among them, ties by id, is made here), re-scored and
   * ordered here. Only an unfiltered search past the float scan's
   * size goes there (a filter is a function of this thread's records). Null when there is no
   * thread, it failed, or any row changed before its answer came (it may have read a row
   * half-written): the caller then searches here.
   */
  private async searchInThread(unit: Float32Array, k: number, accept: ((item: T) => boolean) | undefined, budget: WorkBudget): Promise<IndexHit<T>[] | null> {
    const thread = this.int8.scanThread;
    const rescore = Math.max(RESCORE_MIN, RESCORE_FACTOR * k);
    if (!thread || accept !== undefined || k <= 0 || !this.scansInt8(rescore)) return null;
    if (!thread.wanted(searchesUnderway)) return null;
    this.checkDimension(unit);
    const job = this.int8.threadJob(unit, this.size, rescore);
    if (!job) return null;
    const changes = this.rowChanges;
    const scanned = await thread.scan(job);
    if (!scanned) return null;
    let candidates: SelectedRows;
    try {
      if (changes !== this.rowChanges) return null;
      candidates = selectFromThread(scanned, rescore, this.rowIds);
    } finally {
      scanned.release();
    }
    const found = this.copied(candidates.rows, this.floats.exactScores(unit, candidates.rows));
    const hits = bestInOrder(found, k).map((i) => hitOf(found, i));
    // This thread's share: the selection (about the k best blocks' rows) and the re-score.
    if (budget.charge(2 * rescore)) await budget.handBack();
    return hits;
  }

  /** The float scan of every row: what `search` approximates past EXACT_SCAN_MAX_ROWS (tests compare the two). */
  searchExact(unit: Float32Array, k: number, accept?: (item: T) => boolean): IndexHit<T>[] {
    if (this.size === 0 || k <= 0) return [];
    this.checkDimension(unit);
    const found = this.exactScan(unit, k, accept);
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
    const rescore = Math.max(RESCORE_MIN, RESCORE_FACTOR * k);
    if (!this.scansInt8(rescore)) return this.exactScan(unit, k, accept);
    const approx = this.int8.scores(unit, this.size);
    // Unfiltered, whole blocks of rows below the k-th best block maximum are skipped unread.
    const candidates = accept === undefined
      ? selectTopByBlocks(approx, this.int8.blockMaxima(this.size), rescore, this.rowIds)
      : selectTop(approx, rescore, this.rowIds, this.rowItems, accept);
    // The rescored candidates may be more than k: ordering keeps the k best.
    return this.copied(candidates.rows, this.floats.exactScores(unit, candidates.rows));
  }

  /** `candidates`, computed in slices of `budget` (sliced-scans.ts). */
  private async candidatesInSlices(unit: Float32Array, k: number, accept: ((item: T) => boolean) | undefined, budget: WorkBudget): Promise<Candidates<T>> {
    if (this.size === 0 || k <= 0) return { ids: [], items: [], scores: new Float64Array(0) };
    this.checkDimension(unit);
    const rescore = Math.max(RESCORE_MIN, RESCORE_FACTOR * k);
    const exact = !this.scansInt8(rescore);
    // Exact: k, not the current size (rows added during the scan count too).
    const found = await this.sliced.candidates(unit, exact ? k : rescore, exact, accept, budget);
    if (found !== null) return found;
    // Writes kept spoiling the passes: one scan without handing the loop back.
    this.checkDimension(unit);
    return this.candidates(unit, k, accept);
  }

  /** Scores of rows [from, to) with `unit` (float kernel when `exact`, else int8), in a scratch array valid until the next search. */
  private scoreRows(unit: Float32Array, from: number, to: number, exact: boolean): Float32Array {
    return exact ? this.floats.scores(unit, from, to) : this.int8.scoresOf(unit, from, to);
  }

  /** Scores every row exactly; the best k, unordered. */
  private exactScan(unit: Float32Array, k: number, accept?: (item: T) => boolean): Candidates<T> {
    const top = selectTop(this.floats.scores(unit, 0, this.size), Math.min(k, this.size), this.rowIds, this.rowItems, accept);
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

  /** Whether a search re-scoring `rescore` candidates scans the int8 copy (else the float rows, exact by construction). */
  private scansInt8(rescore: number): boolean {
    return this.size > Math.max(EXACT_SCAN_MAX_ROWS, rescore);
  }

  private checkDimension(unit: Float32Array): void {
    if (unit.length !== this.dim) {
      throw new Error(`query vector has ${unit.length} dimensions but the stored vectors have ${this.dim}; run \`service reindex\``);
    }
  }

  /** A new dimension (first row, or a reindex to another model) starts an empty matrix. */
  private reshape(dim: number): void {
    if (this.size > 0 || dim !== this.dim) this.sliced.noteReshape();
    if (this.size > 0) {
      this.rowIds.length = 0;
      this.rowItems.length = 0;
      this.rowOf.clear();
      this.size = 0;
    }
    this.dim = dim;
    this.capacity = 0;
    this.floats.reshape(dim);
    this.int8.reshape(dim);
    this.ensureCapacity(INITIAL_ROWS);
  }

  private ensureCapacity(rows: number): void {
    if (rows <= this.capacity && this.capacity > 0) return;
    let capacity = Math.max(this.capacity, INITIAL_ROWS);
    while (capacity < rows) capacity *= 2;
    this.floats.ensureCapacity(capacity);
    this.int8.ensureCapacity(capacity);
    this.capacity = capacity;
  }
}
