import { jsQueryDots, type QueryDots } from '../../../../core/outcome-ranking.js';
import { createInt8Dots, INT8_STRIDE_ALIGN_BYTES } from './int8-kernel.js';
import { wasm, type WasmMemory } from './wasm-assembly.js';

const PAGE_BYTES = 65536;
/** Enough for a default recall's comparisons at 384 dimensions; grown when a recall needs more. */
const INITIAL_PAGES = 4;
const MAX_PAGES = 65536;
/**
 * The kernel's f32 result holds every integer up to 2²⁴ exactly: a dot of at most this many
 * dimensions (each product at most 128²) is exact, longer ones are left to JavaScript.
 */
const MAX_EXACT_DIMENSIONS = 2 ** 24 / 128 ** 2;

/**
 * Outcome ranking's comparisons (core/outcome-ranking.ts QueryDots) on the JSON store's int8
 * SIMD kernel (whatever the storage: it is plain computation): the query widened to i16 once, the rows copied in, every row's i32 dot product
 * in one call. The plain SIMD kernel only: the relaxed one takes a query of at most 7 bits,
 * and these queries use all 8. With every row's scale 1 the kernel's f32 result is the exact
 * integer (up to MAX_EXACT_DIMENSIONS dimensions), so the figures are the JavaScript loop's, bit
 * for bit. Where the runtime has no SIMD the kernel module is JavaScript itself.
 */
export function createQueryDots(): QueryDots {
  let memory: WasmMemory | null = null;
  let kernel: ReturnType<typeof createInt8Dots> | null = null;
  return (query, rows, count, out) => {
    if (count === 0) return;
    const n = query.length;
    if (n > MAX_EXACT_DIMENSIONS) return jsQueryDots(query, rows, count, out);
    const stride = Math.ceil(n / INT8_STRIDE_ALIGN_BYTES) * INT8_STRIDE_ALIGN_BYTES;
    // Layout: query (i16, stride slots), rows (stride bytes each), scales (f32), results (f32).
    const rowsAt = 2 * stride;
    const scalesAt = rowsAt + count * stride;
    const outAt = scalesAt + 4 * count;
    const pages = Math.ceil((outAt + 4 * count) / PAGE_BYTES);
    if (memory === null) {
      memory = new wasm.Memory({ initial: Math.max(INITIAL_PAGES, pages), maximum: MAX_PAGES });
      kernel = createInt8Dots(memory, false, false, false);
    } else if (memory.buffer.byteLength < pages * PAGE_BYTES) {
      memory.grow(pages - memory.buffer.byteLength / PAGE_BYTES);
    }
    const buffer = memory.buffer;
    // The query's padding is zero, so whatever a row's padding bytes hold adds nothing.
    const q = new Int16Array(buffer, 0, stride);
    q.set(query);
    q.fill(0, n);
    const bytes = new Int8Array(buffer, rowsAt, count * stride);
    for (let r = 0; r < count; r++) bytes.set(rows[r], r * stride);
    new Float32Array(buffer, scalesAt, count).fill(1);
    kernel!.dots(0, rowsAt, count, stride, outAt, scalesAt, 0);
    const results = new Float32Array(buffer, outAt, count);
    for (let r = 0; r < count; r++) out[r] = results[r];
  };
}
