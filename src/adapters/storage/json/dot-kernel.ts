/**
 * Brute-force cosine is bandwidth- and multiply-bound; plain JS manages ~50 ms for 100k×384,
 * a 4-lane SIMD loop ~7 ms. So the kernel is a tiny WebAssembly module assembled here, byte
 * by byte (no toolchain needed), with a JS loop of the same contract as fallback.
 *
 * Contract: dots(q, m, n, strideBytes, out) — for each of n rows starting at byte offset m
 * (rows strideBytes apart, strideBytes a positive multiple of 32), writes the f32 dot product
 * of the row with the query at byte offset q to consecutive f32 slots starting at out.
 */
/** The slice of the WebAssembly JS API used here (the project's TS libs do not declare it). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(deltaPages: number): number;
}
interface WasmApi {
  Memory: new (desc: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  validate(bytes: Uint8Array): boolean;
}
export const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

export type DotsFn = (q: number, m: number, n: number, strideBytes: number, out: number) => void;

export const STRIDE_ALIGN_FLOATS = 8;

const I32 = 0x7f;
/** The largest memory a kernel imports, in 64 KiB pages (4 GiB: the wasm32 ceiling). */
export const MAX_MEMORY_PAGES = 65536;
/**
 * The limits of a kernel's imported memory: any size, or (for the scan thread) shared, which
 * WebAssembly only allows with a maximum, and which only a shared memory can then satisfy.
 */
function memoryLimits(shared: boolean): number[] {
  return shared ? [0x03, 0x00, ...uleb(MAX_MEMORY_PAGES)] : [0x00, 0x00];
}
const V128 = 0x7b;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function name(s: string): number[] {
  return [...uleb(s.length), ...Buffer.from(s, 'utf8')];
}

function section(id: number, bytes: number[]): number[] {
  return [id, ...uleb(bytes.length), ...bytes];
}

const get = (i: number) => [0x20, i];
const set = (i: number) => [0x21, i];
const tee = (i: number) => [0x22, i];
/** i32.const of a non-negative n: signed LEB128, so a last group with bit 6 set gets a 0 after it. */
const i32const = (n: number) => {
  const bytes = uleb(n);
  return (bytes[bytes.length - 1] & 0x40) !== 0 ? [0x41, ...bytes.slice(0, -1), bytes[bytes.length - 1] | 0x80, 0] : [0x41, ...bytes];
};
const simd = (op: number) => [0xfd, ...uleb(op)];
const v128Load = (offset: number) => [...simd(0x00), 4, ...uleb(offset)];
const v128Zero = [...simd(0x0c), ...new Array<number>(16).fill(0)];
const F32X4_ADD = simd(0xe4);
const F32X4_MUL = simd(0xe6);
const extractLane = (lane: number) => [...simd(0x1f), lane];
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const I32_EQZ = 0x45;
const I32_LT_U = 0x49;
const F32_ADD = 0x92;
const F32_STORE = [0x38, 2, 0];
const BLOCK = [0x02, 0x40];
const LOOP = [0x03, 0x40];
const END = 0x0b;
const brIf = (depth: number) => [0x0d, depth];

// Params: 0 q, 1 m (advanced as the row cursor), 2 n (counted down), 3 strideBytes, 4 out.
// Locals: 5 rowEnd, 6 query cursor, 7 and 8 two f32x4 accumulators (hide add latency).
function kernelBytes(): Uint8Array {
  const body = [
    ...BLOCK,
    ...get(2), I32_EQZ, ...brIf(0),
    ...LOOP,
    ...v128Zero, ...set(7), ...v128Zero, ...set(8),
    ...get(0), ...set(6),
    ...get(1), ...get(3), I32_ADD, ...set(5),
    ...LOOP,
    ...get(7), ...get(1), ...v128Load(0), ...get(6), ...v128Load(0), ...F32X4_MUL, ...F32X4_ADD, ...set(7),
    ...get(8), ...get(1), ...v128Load(16), ...get(6), ...v128Load(16), ...F32X4_MUL, ...F32X4_ADD, ...set(8),
    ...get(6), ...i32const(32), I32_ADD, ...set(6),
    ...get(1), ...i32const(32), I32_ADD, ...tee(1),
    ...get(5), I32_LT_U, ...brIf(0),
    END,
    ...get(4),
    ...get(7), ...get(8), ...F32X4_ADD, ...tee(7), ...extractLane(0),
    ...get(7), ...extractLane(1), F32_ADD,
    ...get(7), ...extractLane(2), F32_ADD,
    ...get(7), ...extractLane(3), F32_ADD,
    ...F32_STORE,
    ...get(4), ...i32const(4), I32_ADD, ...set(4),
    ...get(2), ...i32const(1), I32_SUB, ...tee(2),
    ...brIf(0),
    END,
    END,
    END,
  ];
  return moduleBytes(body);
}

const I32X4_ADD = simd(0xae);
const I32X4_DOT_I16X8_S = simd(0xba);
/** v128.load8x8_s: 8 bytes loaded and widened to i16x8 in one step (one pmovsxbw on x64). */
const load8x8s = (offset: number) => [...simd(0x01), 3, ...uleb(offset)];
const i32x4Lane = (lane: number) => [...simd(0x1b), lane];
const F32_LOAD = [0x2a, 2, 0];
const F32_DEMOTE_F64 = 0xb6;
const F64_CONVERT_I32_S = 0xb7;
const F64_PROMOTE_F32 = 0xbb;
const F64_MUL = 0xa2;

/**
 * Bytes of an int8 row the kernel reads per loop step: four 16-byte blocks, unrolled, so the
 * loop's own bookkeeping (two pointer bumps, a compare, a branch) is paid once per 64 bytes
 * instead of once per 16. Measured (10k rows of 384, a loaded 2-core box): 215 → 200 µs per
 * scan with the loads below. Variants scoring 2 or 4 rows per step (sharing the query loads),
 * or with the multiply replaced by an add, ran no faster: at the 128-bit width WebAssembly
 * offers the scan is bound by its instruction stream (an 8-bit dot instruction would need
 * relaxed SIMD, behind a flag in Node 20).
 */
export const INT8_STRIDE_ALIGN_BYTES = 64;
const INT8_BLOCKS_PER_STEP = INT8_STRIDE_ALIGN_BYTES / 16;

/**
 * The int8 twin: rows of signed bytes (strideBytes a positive multiple of
 * INT8_STRIDE_ALIGN_BYTES) against a query already widened to i16 (2 × strideBytes bytes at
 * q), writing each row's f32 score: its i32 dot product with the query times the row's f32
 * scale (read from consecutive slots at `scales`), multiplied in f64 and rounded once, as
 * JavaScript would. 16 row bytes per block: each half of it loaded and widened to i16x8 in one
 * step (v128.load8x8_s), multiplied with the query's matching i16x8 and pairwise added
 * (i32x4.dot_i16x8_s) into two accumulators. On its own the scan is bound by instructions (a 1k-row scan that fits in
 * cache costs the same per row as 10k), so the query is widened once per search instead of
 * once per row, and the scale is applied here rather than in a second pass over the scores.
 */
function int8KernelBytes(shared = false): Uint8Array {
  // Params: 0 q, 1 m (row cursor), 2 n (counted down), 3 strideBytes, 4 out, 5 scales.
  // Locals: 6 rowEnd, 7 query cursor; v128 8 and 9 accumulators.
  const [ROW_END, QUERY, ACC_LOW, ACC_HIGH] = [6, 7, 8, 9];
  const block = (b: number) => [
    ...get(ACC_LOW), ...get(1), ...load8x8s(16 * b), ...get(QUERY), ...v128Load(32 * b), ...I32X4_DOT_I16X8_S, ...I32X4_ADD, ...set(ACC_LOW),
    ...get(ACC_HIGH), ...get(1), ...load8x8s(16 * b + 8), ...get(QUERY), ...v128Load(32 * b + 16), ...I32X4_DOT_I16X8_S, ...I32X4_ADD, ...set(ACC_HIGH),
  ];
  const body = [
    ...BLOCK,
    ...get(2), I32_EQZ, ...brIf(0),
    ...LOOP,
    ...v128Zero, ...set(ACC_LOW), ...v128Zero, ...set(ACC_HIGH),
    ...get(0), ...set(QUERY),
    ...get(1), ...get(3), I32_ADD, ...set(ROW_END),
    ...LOOP,
    ...Array.from({ length: INT8_BLOCKS_PER_STEP }, (_, b) => block(b)).flat(),
    ...get(QUERY), ...i32const(2 * INT8_STRIDE_ALIGN_BYTES), I32_ADD, ...set(QUERY),
    ...get(1), ...i32const(INT8_STRIDE_ALIGN_BYTES), I32_ADD, ...tee(1),
    ...get(ROW_END), I32_LT_U, ...brIf(0),
    END,
    ...get(4),
    ...get(ACC_LOW), ...get(ACC_HIGH), ...I32X4_ADD, ...tee(ACC_LOW), ...i32x4Lane(0),
    ...get(ACC_LOW), ...i32x4Lane(1), I32_ADD,
    ...get(ACC_LOW), ...i32x4Lane(2), I32_ADD,
    ...get(ACC_LOW), ...i32x4Lane(3), I32_ADD,
    F64_CONVERT_I32_S,
    ...get(5), ...F32_LOAD, F64_PROMOTE_F32, F64_MUL, F32_DEMOTE_F64,
    ...F32_STORE,
    ...get(4), ...i32const(4), I32_ADD, ...set(4),
    ...get(5), ...i32const(4), I32_ADD, ...set(5),
    ...get(2), ...i32const(1), I32_SUB, ...tee(2),
    ...brIf(0),
    END,
    END,
    END,
  ];
  return moduleBytes(body, 2, 6, shared);
}

const F32X4_PMAX = simd(0xeb);
const f32x4Lane = extractLane;
const F32_MAX = 0x97;

/**
 * maxima(scores, blocks, out): for each of `blocks` blocks of 16 consecutive f32 scores at
 * byte offset `scores` (16-byte aligned), writes the block's largest score to consecutive f32
 * slots at `out`. Lets the selection skip whole blocks (row-selection.ts selectTopByBlocks).
 */
function maximaKernelBytes(shared = false): Uint8Array {
  // Params: 0 scores (cursor), 1 blocks (counted down), 2 out; v128 local 3.
  const body = [
    ...BLOCK,
    ...get(1), I32_EQZ, ...brIf(0),
    ...LOOP,
    ...get(0), ...v128Load(0), ...get(0), ...v128Load(16), ...F32X4_PMAX,
    ...get(0), ...v128Load(32), ...get(0), ...v128Load(48), ...F32X4_PMAX,
    ...F32X4_PMAX, ...set(3),
    ...get(2),
    ...get(3), ...f32x4Lane(0), ...get(3), ...f32x4Lane(1), F32_MAX,
    ...get(3), ...f32x4Lane(2), ...get(3), ...f32x4Lane(3), F32_MAX,
    F32_MAX,
    ...F32_STORE,
    ...get(2), ...i32const(4), I32_ADD, ...set(2),
    ...get(0), ...i32const(64), I32_ADD, ...set(0),
    ...get(1), ...i32const(1), I32_SUB, ...tee(1),
    ...brIf(0),
    END,
    END,
    END,
  ];
  const func = [1, 1, V128, ...body];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 3, I32, I32, I32, 0]),
    ...section(2, [1, ...name('env'), ...name('mem'), 0x02, ...memoryLimits(shared)]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name('dots'), 0x00, 0]),
    ...section(10, [1, ...uleb(func.length), ...func]),
  ]);
}

/** Locals after the `params` i32 params: two i32, then `vectors` v128. */
function moduleBytes(body: number[], vectors = 2, params = 5, shared = false): Uint8Array {
  const func = [2, 2, I32, vectors, V128, ...body];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, params, ...new Array<number>(params).fill(I32), 0]),
    ...section(2, [1, ...name('env'), ...name('mem'), 0x02, ...memoryLimits(shared)]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name('dots'), 0x00, 0]),
    ...section(10, [1, ...uleb(func.length), ...func]),
  ]);
}

const compiled = new Map<() => Uint8Array, object | null>();

function simdModule(build: () => Uint8Array = kernelBytes): object | null {
  if (!compiled.has(build)) {
    const bytes = build();
    compiled.set(build, wasm.validate(bytes) ? new wasm.Module(bytes) : null);
  }
  return compiled.get(build) ?? null;
}

function jsDots(memory: WasmMemory): DotsFn {
  return (q, m, n, strideBytes, out) => {
    const f = new Float32Array(memory.buffer);
    const qi = q >>> 2;
    const stride = strideBytes >>> 2;
    let base = m >>> 2;
    let o = out >>> 2;
    for (let r = 0; r < n; r++, base += stride, o++) {
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let j = 0; j < stride; j += 4) {
        s0 += f[base + j] * f[qi + j];
        s1 += f[base + j + 1] * f[qi + j + 1];
        s2 += f[base + j + 2] * f[qi + j + 2];
        s3 += f[base + j + 3] * f[qi + j + 3];
      }
      f[o] = s0 + s1 + s2 + s3;
    }
  };
}

/** The dot-product kernel bound to `memory`: SIMD WebAssembly when available, else JS. */
export function createDots(memory: WasmMemory, preferJs = false): DotsFn {
  const mod = preferJs ? null : simdModule();
  if (!mod) return jsDots(memory);
  const instance = new wasm.Instance(mod, { env: { mem: memory } });
  return instance.exports.dots as DotsFn;
}

/**
 * The int8 kernel's contract: dots's, but i8 rows, an i16 query, and f32 results scaled by each
 * row's f32 scale from consecutive slots at byte offset `scales`.
 */
export type Int8DotsFn = (q: number, m: number, n: number, strideBytes: number, out: number, scales: number) => void;

function jsInt8Dots(memory: WasmMemory): Int8DotsFn {
  return (q, m, n, strideBytes, out, scales) => {
    const b = new Int8Array(memory.buffer);
    const query = new Int16Array(memory.buffer, q, strideBytes);
    const f = new Float32Array(memory.buffer);
    for (let r = 0, base = m, at = out >>> 2, sc = scales >>> 2; r < n; r++, base += strideBytes, at++, sc++) {
      let s = 0;
      for (let j = 0; j < strideBytes; j++) s += b[base + j] * query[j];
      f[at] = s * f[sc];
    }
  };
}

const sharedInt8KernelBytes = () => int8KernelBytes(true);
const sharedMaximaKernelBytes = () => maximaKernelBytes(true);

/**
 * The int8 and maxima kernels for a shared memory (the scan thread's: scan-thread.ts), or
 * null where this runtime has no SIMD or no shared WebAssembly memory.
 */
export function sharedInt8Modules(): { dots: object; maxima: object } | null {
  try {
    const dots = simdModule(sharedInt8KernelBytes);
    const maxima = simdModule(sharedMaximaKernelBytes);
    if (!dots || !maxima) return null;
    new wasm.Memory({ initial: 1, maximum: MAX_MEMORY_PAGES, shared: true });
    return { dots, maxima };
  } catch {
    return null;
  }
}

/** The int8 kernel bound to `memory` (a shared one when `shared`): SIMD when available, else JS. */
export function createInt8Dots(memory: WasmMemory, preferJs = false, shared = false): Int8DotsFn {
  const mod = preferJs ? null : simdModule(shared ? sharedInt8KernelBytes : int8KernelBytes);
  if (!mod) return jsInt8Dots(memory);
  const instance = new wasm.Instance(mod, { env: { mem: memory } });
  return instance.exports.dots as Int8DotsFn;
}

/** maxima(scores, blocks, out): see maximaKernelBytes. */
export type MaximaFn = (scores: number, blocks: number, out: number) => void;

function jsMaxima(memory: WasmMemory): MaximaFn {
  return (scores, blocks, out) => {
    const f = new Float32Array(memory.buffer);
    for (let b = 0, at = scores >>> 2, o = out >>> 2; b < blocks; b++, at += 16, o++) {
      let m = f[at];
      for (let j = 1; j < 16; j++) if (f[at + j] > m) m = f[at + j];
      f[o] = m;
    }
  };
}

/** The block maxima kernel bound to `memory` (a shared one when `shared`): SIMD when available, else JS. */
export function createMaxima(memory: WasmMemory, preferJs = false, shared = false): MaximaFn {
  const mod = preferJs ? null : simdModule(shared ? sharedMaximaKernelBytes : maximaKernelBytes);
  if (!mod) return jsMaxima(memory);
  const instance = new wasm.Instance(mod, { env: { mem: memory } });
  return instance.exports.dots as MaximaFn;
}
