/**
 * Brute-force cosine is bandwidth- and multiply-bound; plain JS manages ~50 ms for 100k×384,
 * a 4-lane SIMD loop ~7 ms. So the kernel is a tiny WebAssembly module assembled byte by byte
 * (wasm-assembly.ts), with a JS loop of the same contract as fallback. The block maxima
 * kernel of the int8 scan's selection lives here too; the int8 kernels in int8-kernel.ts.
 *
 * Contract: dots(q, m, n, strideBytes, out) — for each of n rows starting at byte offset m
 * (rows strideBytes apart, strideBytes a positive multiple of 32), writes the f32 dot product
 * of the row with the query at byte offset q to consecutive f32 slots starting at out.
 */
import {
  BLOCK, brIf, END, extractLane, F32_ADD, F32_STORE, F32X4_ADD, F32X4_MUL, get, I32, I32_ADD, I32_EQZ, I32_LT_U, I32_SUB,
  i32const, LOOP, memoryLimits, moduleBytes, name, section, set, simd, simdModule, tee, uleb, V128, v128Load, v128Zero,
  wasm, type WasmMemory,
} from './wasm-assembly.js';

export { MAX_MEMORY_PAGES, wasm, type WasmMemory } from './wasm-assembly.js';

export type DotsFn = (q: number, m: number, n: number, strideBytes: number, out: number) => void;

export const STRIDE_ALIGN_FLOATS = 8;


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
  const mod = preferJs ? null : simdModule(kernelBytes);
  if (!mod) return jsDots(memory);
  const instance = new wasm.Instance(mod, { env: { mem: memory } });
  return instance.exports.dots as DotsFn;
}

const sharedMaximaKernelBytes = () => maximaKernelBytes(true);

/** The block maxima kernel's module for a shared memory (the scan thread's), or null. */
export function sharedMaximaModule(): object | null {
  return simdModule(sharedMaximaKernelBytes);
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
