import { sharedMaximaModule } from './dot-kernel.js';
import {
  BLOCK, brIf, END, F32_STORE, get, I32_ADD, I32_EQZ, I32_LT_U, I32_SUB, i32const, LOOP, MAX_MEMORY_PAGES, moduleBytes,
  set, simd, simdModule, tee, uleb, v128Load, v128Zero, wasm, type WasmMemory,
} from './wasm-assembly.js';

/**
 * The int8 scan kernels (Int8Rows): rows of signed bytes against a quantised query, each
 * row's i32 dot product scaled by the row's f32 scale. A relaxed-SIMD kernel where the runtime
 * runs it right, else the plain SIMD one, else JavaScript; all give the same scores bit for bit.
 */
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
 * i16x8.relaxed_dot_i8x16_i7x16_s: 16 byte products summed in pairs in one instruction
 * (pmaddubsw on x64), where the plain kernel widens each half of the row to 16 bits first and
 * multiplies the halves separately.
 */
const I16X8_RELAXED_DOT_I8X16_I7X16_S = simd(0x112);
const I32X4_EXTADD_PAIRWISE_I16X8_S = simd(0x7e);
const I32_LOAD = [0x28, 2, 0];
const I32_MUL = 0x6c;

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

// Params: 0 q, 1 m (row cursor), 2 n (counted down), 3 strideBytes, 4 out, 5 scales, 6 sums.
// Locals: 7 rowEnd, 8 query cursor; v128 9 and 10 accumulators.
const [SUMS, ROW_END, QUERY, ACC_A, ACC_B] = [6, 7, 8, 9, 10];

/**
 * The int8 kernels' common loop: per row, the accumulators zeroed, INT8_BLOCKS_PER_STEP blocks
 * of 16 row bytes per step (`block(b)` adds block b into ACC_A or ACC_B; the query cursor
 * advances `queryStepBytes` a step), the accumulators' lanes summed to the row's i32 dot,
 * `correction` applied to it, then the scale: converted to f64, multiplied by the row's scale
 * and rounded once to f32, as JavaScript would.
 */
function int8ScanBytes(shared: boolean, block: (b: number) => number[], queryStepBytes: number, correction: number[]): Uint8Array {
  const body = [
    ...BLOCK,
    ...get(2), I32_EQZ, ...brIf(0),
    ...LOOP,
    ...v128Zero, ...set(ACC_A), ...v128Zero, ...set(ACC_B),
    ...get(0), ...set(QUERY),
    ...get(1), ...get(3), I32_ADD, ...set(ROW_END),
    ...LOOP,
    ...Array.from({ length: INT8_BLOCKS_PER_STEP }, (_, b) => block(b)).flat(),
    ...get(QUERY), ...i32const(queryStepBytes), I32_ADD, ...set(QUERY),
    ...get(1), ...i32const(INT8_STRIDE_ALIGN_BYTES), I32_ADD, ...tee(1),
    ...get(ROW_END), I32_LT_U, ...brIf(0),
    END,
    ...get(4),
    ...get(ACC_A), ...get(ACC_B), ...I32X4_ADD, ...tee(ACC_A), ...i32x4Lane(0),
    ...get(ACC_A), ...i32x4Lane(1), I32_ADD,
    ...get(ACC_A), ...i32x4Lane(2), I32_ADD,
    ...get(ACC_A), ...i32x4Lane(3), I32_ADD,
    ...correction,
    F64_CONVERT_I32_S,
    ...get(5), ...F32_LOAD, F64_PROMOTE_F32, F64_MUL, F32_DEMOTE_F64,
    ...F32_STORE,
    ...get(4), ...i32const(4), I32_ADD, ...set(4),
    ...get(5), ...i32const(4), I32_ADD, ...set(5),
    ...get(SUMS), ...i32const(4), I32_ADD, ...set(SUMS),
    ...get(2), ...i32const(1), I32_SUB, ...tee(2),
    ...brIf(0),
    END,
    END,
    END,
  ];
  return moduleBytes(body, 2, 7, shared);
}

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
  // Each half of the block widened to i16x8 as it is loaded, times the query's i16x8.
  const block = (b: number) => [
    ...get(ACC_A), ...get(1), ...load8x8s(16 * b), ...get(QUERY), ...v128Load(32 * b), ...I32X4_DOT_I16X8_S, ...I32X4_ADD, ...set(ACC_A),
    ...get(ACC_B), ...get(1), ...load8x8s(16 * b + 8), ...get(QUERY), ...v128Load(32 * b + 16), ...I32X4_DOT_I16X8_S, ...I32X4_ADD, ...set(ACC_B),
  ];
  return int8ScanBytes(shared, block, 2 * INT8_STRIDE_ALIGN_BYTES, []);
}

/**
 * The int8 kernel with relaxed SIMD: the same results as int8KernelBytes (bit for bit), about
 * a fifth faster (10k rows of 384: 190 → 148 µs on this 2-core box). The relaxed 8-bit dot
 * multiplies signed row bytes with bytes whose top bit is clear (the result is left to the
 * engine otherwise), so the query comes as its steps plus QUERY_OFFSET (it is quantised to
 * ±QUERY_STEPS for every kernel, so all give the same integers), and each row's dot loses
 * QUERY_OFFSET × the sum of its bytes again (consecutive i32 slots at `sums`). Products of two
 * values up to 127 summed in pairs stay below the i16 limit, so nothing saturates. The fused
 * "dot and add" form of the instruction was left out: in Node 20's engine it returned twice
 * the dot product.
 */
function relaxedInt8KernelBytes(shared = false): Uint8Array {
  const block = (b: number) => [
    ...get(b % 2 === 0 ? ACC_A : ACC_B), ...get(1), ...v128Load(16 * b), ...get(QUERY), ...v128Load(16 * b),
    ...I16X8_RELAXED_DOT_I8X16_I7X16_S, ...I32X4_EXTADD_PAIRWISE_I16X8_S, ...I32X4_ADD, ...set(b % 2 === 0 ? ACC_A : ACC_B),
  ];
  // The dot of the offset query, less QUERY_OFFSET × the row's byte sum.
  const correction = [...get(SUMS), ...I32_LOAD, ...i32const(QUERY_OFFSET), I32_MUL, I32_SUB];
  return int8ScanBytes(shared, block, INT8_STRIDE_ALIGN_BYTES, correction);
}

/**
 * The int8 kernels' contract: dots's, but i8 rows, the query in the kernel's layout at q
 * (Int8QueryLayout), and f32 results: each row's i32 dot product with the query's steps times
 * its f32 scale from consecutive slots at byte offset `scales`. `sums` points at consecutive
 * i32 slots holding the sum of each row's bytes (only the relaxed kernel reads them).
 */
export type Int8DotsFn = (q: number, m: number, n: number, strideBytes: number, out: number, scales: number, sums: number) => void;

/**
 * The query of an int8 scan is quantised to ±QUERY_STEPS steps (whatever the kernel, so every
 * kernel gives the same scores), and held as i16 (`i16`: 2 × strideBytes bytes) or, for the
 * relaxed kernel, as bytes of its steps plus QUERY_OFFSET (`offset-u8`: strideBytes bytes, all
 * in [1, 127]). Seven bits of query instead of eight changed no result on the benchmark's
 * stores (recall@5/10/20 after the exact re-score 1.0000 either way, 300 queries, 10k rows of
 * noisy copies and of real embeddings).
 */
export const QUERY_STEPS = 63;
export const QUERY_OFFSET = 64;
export type Int8QueryLayout = 'i16' | 'offset-u8';

export interface Int8Kernel {
  dots: Int8DotsFn;
  query: Int8QueryLayout;
}

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
const sharedRelaxedInt8KernelBytes = () => relaxedInt8KernelBytes(true);

let relaxedChecked: boolean | undefined;

/**
 * The V8 flag that offers relaxed SIMD on Node 20 (on by default from Node 22). The service
 * never sets it: a flag flipped at run time changes the whole process, every module compiled
 * after it included. An operator who wants the relaxed kernel on Node 20 starts Node with it
 * (`node --experimental-wasm-relaxed-simd bin/service.js serve`; docs/behavior.md "Storages").
 */
export const RELAXED_SIMD_FLAG = '--experimental-wasm-relaxed-simd';

/**
 * Whether this runtime runs the relaxed int8 kernel, and runs it right: only where the runtime
 * offers relaxed SIMD as it was started (the module validates), and the kernel then gives the
 * known answers: an engine that computes the instruction otherwise (relaxed results are the
 * engine's choice outside the range used here) keeps the plain kernel too, so results never
 * depend on the engine.
 */
export function relaxedInt8Works(): boolean {
  if (relaxedChecked === undefined) {
    relaxedChecked = false;
    try {
      const bytes = relaxedInt8KernelBytes();
      if (wasm.validate(bytes)) {
        const module = new wasm.Module(bytes);
        relaxedChecked = int8KnownAnswersHold((memory) => new wasm.Instance(module, { env: { mem: memory } }).exports.dots as Int8DotsFn, 'offset-u8');
      }
    } catch {
      relaxedChecked = false;
    }
  }
  return relaxedChecked;
}

/**
 * Whether a kernel built by `make` gives the exact integer dot products of a few rows with a
 * query, over the whole range of both (rows ±127, query ±QUERY_STEPS, signs mixed), in the
 * query layout `layout`.
 */
export function int8KnownAnswersHold(make: (memory: WasmMemory) => Int8DotsFn, layout: Int8QueryLayout): boolean {
  const stride = 2 * INT8_STRIDE_ALIGN_BYTES;
  const rows = 4;
  // Layout: query (room for i16) | rows | scales | sums | scores.
  const rowsAt = 2 * stride;
  const scalesAt = rowsAt + rows * stride;
  const sumsAt = scalesAt + 4 * rows;
  const outAt = sumsAt + 4 * rows;
  const memory = new wasm.Memory({ initial: 1 });
  const q = Array.from({ length: stride }, (_, j) => ((j * 37) % (2 * QUERY_STEPS + 1)) - QUERY_STEPS);
  q[0] = QUERY_STEPS;
  q[1] = -QUERY_STEPS;
  if (layout === 'i16') new Int16Array(memory.buffer, 0, stride).set(q);
  else new Uint8Array(memory.buffer, 0, stride).set(q.map((v) => v + QUERY_OFFSET));
  const bytes = new Int8Array(memory.buffer);
  const sums = new Int32Array(memory.buffer, sumsAt, rows);
  new Float32Array(memory.buffer, scalesAt, rows).fill(1);
  const expected: number[] = [];
  for (let r = 0; r < rows; r++) {
    let dot = 0;
    let sum = 0;
    for (let j = 0; j < stride; j++) {
      const v = r === 0 ? 127 : r === 1 ? -127 : ((j * (r * 29 + 11)) % 255) - 127;
      bytes[rowsAt + r * stride + j] = v;
      dot += v * q[j];
      sum += v;
    }
    sums[r] = sum;
    expected.push(dot);
  }
  make(memory)(0, rowsAt, rows, stride, outAt, scalesAt, sumsAt);
  const out = new Float32Array(memory.buffer, outAt, rows);
  return expected.every((v, r) => out[r] === v);
}

/** The best int8 kernel module this runtime runs right (relaxed, else plain SIMD), or null. */
function int8Module(shared: boolean, allowRelaxed = true): { module: object; query: Int8QueryLayout } | null {
  if (allowRelaxed && relaxedInt8Works()) {
    const module = simdModule(shared ? sharedRelaxedInt8KernelBytes : relaxedInt8KernelBytes);
    if (module) return { module, query: 'offset-u8' };
  }
  const module = simdModule(shared ? sharedInt8KernelBytes : int8KernelBytes);
  return module ? { module, query: 'i16' } : null;
}

/**
 * The int8 and maxima kernels for a shared memory (the scan thread's: scan-thread.ts), with
 * the int8 kernel's query layout, or null where this runtime has no SIMD or no shared
 * WebAssembly memory. createInt8Dots(memory, false, true) picks the same kernel.
 */
export function sharedInt8Modules(): { dots: object; maxima: object; query: Int8QueryLayout } | null {
  try {
    const dots = int8Module(true);
    const maxima = sharedMaximaModule();
    if (!dots || !maxima) return null;
    new wasm.Memory({ initial: 1, maximum: MAX_MEMORY_PAGES, shared: true });
    return { dots: dots.module, maxima, query: dots.query };
  } catch {
    return null;
  }
}

/**
 * The int8 kernel bound to `memory` (a shared one when `shared`): relaxed SIMD where it runs
 * right (unless `allowRelaxed` is false: tests compare the kernels), else plain SIMD, else JS.
 */
export function createInt8Dots(memory: WasmMemory, preferJs = false, shared = false, allowRelaxed = true): Int8Kernel {
  const chosen = preferJs ? null : int8Module(shared, allowRelaxed);
  if (!chosen) return { dots: jsInt8Dots(memory), query: 'i16' };
  const instance = new wasm.Instance(chosen.module, { env: { mem: memory } });
  return { dots: instance.exports.dots as Int8DotsFn, query: chosen.query };
}
