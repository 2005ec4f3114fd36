import { createDots, STRIDE_ALIGN_FLOATS, wasm, type DotsFn, type WasmMemory } from './dot-kernel.js';

const PAGE_BYTES = 65536;
const MAX_PAGES = 65536; // 4 GiB: the wasm32 ceiling

/**
 * The index's rows at full precision, laid out in a WebAssembly memory as
 * [query | rows × stride | f32 scores scratch], so one kernel call scores any run of rows
 * without allocating. Row numbers are the index's own (VectorIndex keeps ids and items);
 * Int8Rows is the quantised twin its large scans read.
 */
export class FloatRows {
  private dim = 0;
  private strideFloats = 0;
  private capacity = 0;
  private memory: WasmMemory | null = null;
  /** View of the whole memory; replaced after every grow (growing detaches old views). */
  private floats: Float32Array | null = null;
  private dots: DotsFn | null = null;

  constructor(private readonly preferJsKernel = false) {}

  /** Starts an empty matrix for vectors of `dim` dimensions. */
  reshape(dim: number): void {
    this.dim = dim;
    this.strideFloats = Math.ceil(dim / STRIDE_ALIGN_FLOATS) * STRIDE_ALIGN_FLOATS;
    this.capacity = 0;
    this.memory = null;
    this.floats = null;
  }

  /** Room for `capacity` rows (the caller chooses the growth; rows kept). */
  ensureCapacity(capacity: number): void {
    if (capacity <= this.capacity && this.memory) return;
    // query + rows + one f32 score per row
    const bytes = (this.strideFloats + capacity * this.strideFloats + capacity) * 4;
    const pages = Math.ceil(bytes / PAGE_BYTES);
    if (pages > MAX_PAGES) {
      throw new Error(`vector index full: ${capacity} vectors of ${this.dim} dimensions exceed 4 GiB; use PostgreSQL storage`);
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
  }

  /** Writes `unit` (of the matrix's dimension) into `row`, zero-padded to the stride. */
  set(row: number, unit: Float32Array): void {
    const at = this.rowOffset(row);
    this.floats!.set(unit, at);
    this.floats!.fill(0, at + unit.length, at + this.strideFloats);
  }

  /** Decodes the base64 of a stored vector straight into `row`; returns the row as written. */
  setEncoded(row: number, base64: string): Float32Array {
    const at = this.rowOffset(row);
    Buffer.from(this.memory!.buffer, at * 4, this.dim * 4).write(base64, 'base64');
    this.floats!.fill(0, at + this.dim, at + this.strideFloats);
    return this.floats!.subarray(at, at + this.dim);
  }

  /** Row `from` moves into `to` (the index keeps its rows dense). */
  move(from: number, to: number): void {
    const at = this.rowOffset(from);
    this.floats!.copyWithin(this.rowOffset(to), at, at + this.strideFloats);
  }

  /** A view of `row` (valid until the next write or growth). */
  view(row: number): Float32Array {
    return new Float32Array(this.memory!.buffer, this.rowOffset(row) * 4, this.dim);
  }

  /**
   * Exact scores of rows [from, to) with `unit`, in a scratch array valid until the next call.
   * The query is written again each time: another search may have used the query slot while
   * the loop was handed back.
   */
  scores(unit: Float32Array, from: number, to: number): Float32Array {
    const f = this.loadQuery(unit);
    const out = this.scoresOffset();
    this.dots!(0, this.rowOffset(from) * 4, to - from, this.strideFloats * 4, out * 4);
    return f.subarray(out, out + (to - from));
  }

  /** Exact scores of `rows`, one kernel call each (the int8 candidates' re-score too). */
  exactScores(unit: Float32Array, rows: ArrayLike<number>): Float64Array {
    const f = this.loadQuery(unit);
    const out = this.scoresOffset();
    const scores = new Float64Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      this.dots!(0, this.rowOffset(rows[i]) * 4, 1, this.strideFloats * 4, out * 4);
      scores[i] = f[out];
    }
    return scores;
  }

  /** Float offset of `row` (the query slot comes first). */
  private rowOffset(row: number): number {
    return (row + 1) * this.strideFloats;
  }

  /** Where the kernel writes its scores: after the matrix's capacity. */
  private scoresOffset(): number {
    return this.rowOffset(this.capacity);
  }

  /** Writes the query into the query slot (zero-padded to the stride) and returns the float view. */
  private loadQuery(unit: Float32Array): Float32Array {
    const f = this.floats!;
    f.set(unit, 0);
    f.fill(0, unit.length, this.strideFloats);
    return f;
  }
}
