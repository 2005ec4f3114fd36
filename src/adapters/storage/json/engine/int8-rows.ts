import { createMaxima, MAX_MEMORY_PAGES, wasm, type MaximaFn, type WasmMemory } from './dot-kernel.js';
import { createInt8Dots, INT8_STRIDE_ALIGN_BYTES, QUERY_OFFSET, QUERY_STEPS, type Int8Kernel } from './int8-kernel.js';
import { SCORE_BLOCK_ROWS } from './row-selection.js';
import type { ScanJob, ScanThread } from './scan-thread.js';

const PAGE_BYTES = 65536;
const MAX_PAGES = MAX_MEMORY_PAGES;
const INT8_MAX = 127;
/**
 * Rows the scan thread scores per kernel call into its lane (a multiple of SCORE_BLOCK_ROWS).
 * The lane has a fixed size and place, so a scan under way never writes where a row, a
 * scale or the main thread's scores are, whatever the main thread grows meanwhile.
 */
const LANE_ROWS = 4096;
let nextMemoryKey = 1;
/** A memory this process no longer holds: the scan thread lets go of it too. */
const dropped = new FinalizationRegistry<{ thread: ScanThread; key: number }>(({ thread, key }) => thread.drop(key));

/**
 * A quantised copy of the index's rows: one signed byte per dimension, scaled per row so the
 * row's largest component maps to ±127, laid out in a WebAssembly memory as
 * [query slot (two strides) | the scan thread's lane: its query, LANE_ROWS f32 scores and
 * their block maxima | rows × stride | f32 scores | f32 row scales | i32 row byte sums | f32
 * block maxima of the scores]. The query is held in the kernel's layout (dot-kernel.ts
 * Int8QueryLayout). Scanning it reads a quarter of the float matrix's bytes; its scores (dot × row
 * scale, the kernel applying the scale) only choose candidates, which the index then re-scores
 * exactly from the float rows. Row numbers are the index's own. With a scan thread the memory
 * is shared, and `threadJob` describes a scan the thread can run on it (scan-thread.ts).
 */
export class Int8Rows {
  private strideBytes = 0;
  private capacity = 0;
  private memory: WasmMemory | null = null;
  private bytes: Int8Array | null = null;
  /** Per row (in the memory, after the scores): the float value of one quantisation step (row max / 127). */
  private scales = new Float32Array(0);
  /** Per row (after the scales): the sum of its bytes (the relaxed kernel's query offset needs it). */
  private sums = new Int32Array(0);
  private kernel: Int8Kernel | null = null;
  private maxima: MaximaFn | null = null;
  /** The memory's key for the scan thread (0: none yet). */
  private key = 0;

  constructor(private readonly preferJsKernel = false, private readonly thread: ScanThread | null = null) {}

  /** Starts an empty copy for vectors of `dim` dimensions. */
  reshape(dim: number): void {
    if (this.key !== 0) this.thread?.drop(this.key);
    this.key = 0;
    this.strideBytes = Math.ceil(dim / INT8_STRIDE_ALIGN_BYTES) * INT8_STRIDE_ALIGN_BYTES;
    this.capacity = 0;
    this.memory = null;
    this.bytes = null;
    this.scales = new Float32Array(0);
    this.sums = new Int32Array(0);
  }

  ensureCapacity(rows: number): void {
    if (rows <= this.capacity && this.memory) return;
    const capacity = Math.max(rows, this.capacity);
    const total = this.maximaOffset(capacity) + 4 * Math.ceil(capacity / SCORE_BLOCK_ROWS);
    const pages = Math.ceil(total / PAGE_BYTES);
    if (pages > MAX_PAGES) throw new Error(`vector index full: ${rows} quantised rows exceed 4 GiB; use PostgreSQL storage`);
    if (!this.memory) {
      const shared = this.thread !== null && !this.preferJsKernel && this.createShared(pages);
      this.memory ??= new wasm.Memory({ initial: pages, maximum: MAX_PAGES });
      this.kernel = createInt8Dots(this.memory, this.preferJsKernel, shared);
      this.maxima = createMaxima(this.memory, this.preferJsKernel, shared);
      if (shared) {
        this.key = nextMemoryKey++;
        dropped.register(this.memory, { thread: this.thread!, key: this.key });
      }
    } else {
      const current = this.memory.buffer.byteLength / PAGE_BYTES;
      if (pages > current) this.memory.grow(pages - current);
    }
    this.bytes = new Int8Array(this.memory.buffer);
    // The sums, then the scales, move up with the larger score area (copyWithin copies
    // overlapping ranges whole; the sums first, as the scales' new place may cover their old one).
    const kept = Math.min(this.capacity, capacity);
    const words = new Int32Array(this.memory.buffer);
    const [scalesAt, sumsAt] = [this.scalesOffset(capacity), this.sumsOffset(capacity)];
    const [oldScalesAt, oldSumsAt] = [this.scalesOffset(this.capacity), this.sumsOffset(this.capacity)];
    words.copyWithin(sumsAt / 4, oldSumsAt / 4, oldSumsAt / 4 + kept);
    words.copyWithin(scalesAt / 4, oldScalesAt / 4, oldScalesAt / 4 + kept);
    this.scales = new Float32Array(this.memory.buffer, scalesAt, capacity);
    this.sums = new Int32Array(this.memory.buffer, sumsAt, capacity);
    this.capacity = capacity;
  }

  /**
   * A shared memory for the scan thread; false (and no memory) where the process cannot have
   * one (an address-space limit: a shared memory reserves its 4 GiB maximum up front), so the
   * store keeps working, scanning on the main thread.
   */
  private createShared(pages: number): boolean {
    try {
      this.memory = new wasm.Memory({ initial: pages, maximum: MAX_PAGES, shared: true });
      return true;
    } catch {
      return false;
    }
  }

  /** Quantises `unit` into row `row` (capacity ensured by the caller). */
  set(row: number, unit: Float32Array): void {
    const at = this.rowOffset(row);
    this.scales[row] = quantise(unit, this.bytes!, at, this.strideBytes);
    let sum = 0;
    for (let i = at; i < at + this.strideBytes; i++) sum += this.bytes![i];
    this.sums[row] = sum;
  }

  /** Row `from` moves into `to` (the index keeps its rows dense). */
  move(from: number, to: number): void {
    const at = this.rowOffset(from);
    this.bytes!.copyWithin(this.rowOffset(to), at, at + this.strideBytes);
    this.scales[to] = this.scales[from];
    this.sums[to] = this.sums[from];
  }

  /**
   * Approximate dot products of the first `n` rows with `unit`, in a scratch array valid until
   * the next call. Only their order matters (the query's own scale is left out).
   */
  scores(unit: Float32Array, n: number): Float32Array {
    return this.scoresOf(unit, 0, n);
  }

  /**
   * `scores` of rows [from, to) only, at [0, to - from) of the same scratch: a sliced search
   * scans a block of rows per turn of the event loop, writing the query again each time (another
   * search may have used the query slot in between).
   */
  scoresOf(unit: Float32Array, from: number, to: number): Float32Array {
    const n = to - from;
    // The query in the kernel's layout once here, so the kernel need not convert it for every row.
    this.queryInto(unit, this.memory!.buffer, 0);
    const out = this.headerBytes() + this.capacity * this.strideBytes;
    this.kernel!.dots(0, this.rowOffset(from), n, this.strideBytes, out, this.scalesOffset(this.capacity) + 4 * from, this.sumsOffset(this.capacity) + 4 * from);
    return new Float32Array(this.memory!.buffer, out, n);
  }

  /**
   * The scan of the first `n` rows with `unit` as the scan thread runs it, for the `keep` best
   * (its scores and block maxima are those of `scores(unit, n)` and `blockMaxima(n)`, as long
   * as the rows do not change meanwhile), or null without a thread.
   */
  threadJob(unit: Float32Array, n: number, keep: number): ScanJob | null {
    if (this.key === 0 || !this.memory) return null;
    const lane = this.laneOffset();
    return {
      memory: this.memory,
      key: this.key,
      queryBytes: this.queryLength(),
      writeQuery: (buffer, at) => this.queryInto(unit, buffer, at),
      rowsAt: this.rowOffset(0),
      rows: n,
      keep,
      strideBytes: this.strideBytes,
      scalesAt: this.scalesOffset(this.capacity),
      sumsAt: this.sumsOffset(this.capacity),
      laneQueryAt: lane,
      laneScoresAt: lane + this.queryBytes(),
      laneMaximaAt: lane + this.queryBytes() + 4 * LANE_ROWS,
      laneRows: LANE_ROWS,
    };
  }

  /** The scan thread this copy's memory is shared with (null: none). */
  get scanThread(): ScanThread | null {
    return this.key === 0 ? null : this.thread;
  }

  /**
   * The largest score of each whole block of SCORE_BLOCK_ROWS among the `n` scores the last
   * `scores(unit, n)` call gave (valid as long as they are).
   */
  blockMaxima(n: number): Float32Array {
    const blocks = Math.floor(n / SCORE_BLOCK_ROWS);
    const out = this.maximaOffset(this.capacity);
    this.maxima!(this.headerBytes() + this.capacity * this.strideBytes, blocks, out);
    return new Float32Array(this.memory!.buffer, out, blocks);
  }

  /**
   * Writes the query for the kernel at byte `at` of `buffer`: its steps (±QUERY_STEPS) as
   * i16, zero-padded to the stride, or plus QUERY_OFFSET as bytes (the relaxed kernel), the
   * padding QUERY_OFFSET too (it meets the rows' zero padding).
   */
  private queryInto(unit: Float32Array, buffer: ArrayBufferLike, at: number): void {
    if (this.kernel!.query === 'i16') {
      quantise(unit, new Int16Array(buffer, at, this.strideBytes), 0, this.strideBytes, QUERY_STEPS);
      return;
    }
    quantise(unit, new Int8Array(buffer, at, this.strideBytes), 0, this.strideBytes, QUERY_STEPS, QUERY_OFFSET);
  }

  private maximaOffset(capacity: number): number {
    return this.sumsOffset(capacity) + 4 * capacity;
  }

  /** Where the row byte sums start in a memory laid out for `capacity` rows (after the scales). */
  private sumsOffset(capacity: number): number {
    return this.scalesOffset(capacity) + 4 * capacity;
  }

  private rowOffset(row: number): number {
    return this.headerBytes() + row * this.strideBytes; // the query slot and the lane come first
  }

  /** Where the row scales start in a memory laid out for `capacity` rows (after the scores). */
  private scalesOffset(capacity: number): number {
    return this.headerBytes() + capacity * (this.strideBytes + 4);
  }

  /** The scan thread's lane: after the main thread's query slot. */
  private laneOffset(): number {
    return this.queryBytes();
  }

  /** The query slot and the lane (query, scores, maxima), all multiples of 16 bytes. */
  private headerBytes(): number {
    return this.laneOffset() + this.queryBytes() + 4 * LANE_ROWS + 4 * (LANE_ROWS / SCORE_BLOCK_ROWS);
  }

  /** The bytes of the query the kernel reads: one i16 per dimension, or one byte (the relaxed kernel's layout). */
  private queryLength(): number {
    return this.kernel!.query === 'i16' ? 2 * this.strideBytes : this.strideBytes;
  }

  /** The query's slot: room for one i16 per dimension (a multiple of 16 bytes, so rows stay aligned). */
  private queryBytes(): number {
    return 2 * this.strideBytes;
  }
}

/**
 * Writes `v` as steps of max|v|/`steps`, each plus `offset`, at `at` (padded to `stride` with
 * `offset`), returning the value of one step: int8 rows in ±127 steps, the query in
 * ±QUERY_STEPS (offset for the relaxed kernel).
 */
function quantise(v: Float32Array, bytes: Int8Array | Int16Array, at: number, stride: number, steps = INT8_MAX, offset = 0): number {
  let max = 0;
  for (let i = 0; i < v.length; i++) {
    const a = Math.abs(v[i]);
    if (a > max) max = a;
  }
  const step = max > 0 ? max / steps : 1;
  for (let i = 0; i < v.length; i++) bytes[at + i] = Math.round(v[i] / step) + offset;
  bytes.fill(offset, at + v.length, at + stride);
  return step;
}
