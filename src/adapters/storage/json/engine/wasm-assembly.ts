/**
 * The vocabulary the JSON store's scan kernels are written in: WebAssembly modules assembled
 * byte by byte (no toolchain needed), the few opcodes they use, and the compiled-module cache.
 * The kernels themselves: dot-kernel.ts (float rows, block maxima) and int8-kernel.ts.
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

export const I32 = 0x7f;
/** The largest memory a kernel imports, in 64 KiB pages (4 GiB: the wasm32 ceiling). */
export const MAX_MEMORY_PAGES = 65536;
/**
 * The limits of a kernel's imported memory: any size, or (for the scan thread) shared, which
 * WebAssembly only allows with a maximum, and which only a shared memory can then satisfy.
 */
export function memoryLimits(shared: boolean): number[] {
  return shared ? [0x03, 0x00, ...uleb(MAX_MEMORY_PAGES)] : [0x00, 0x00];
}
export const V128 = 0x7b;

export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

export function name(s: string): number[] {
  return [...uleb(s.length), ...Buffer.from(s, 'utf8')];
}

export function section(id: number, bytes: number[]): number[] {
  return [id, ...uleb(bytes.length), ...bytes];
}

export const get = (i: number) => [0x20, i];
export const set = (i: number) => [0x21, i];
export const tee = (i: number) => [0x22, i];
/** i32.const of a non-negative n: signed LEB128, so a last group with bit 6 set gets a 0 after it. */
export const i32const = (n: number) => {
  const bytes = uleb(n);
  return (bytes[bytes.length - 1] & 0x40) !== 0 ? [0x41, ...bytes.slice(0, -1), bytes[bytes.length - 1] | 0x80, 0] : [0x41, ...bytes];
};
export const simd = (op: number) => [0xfd, ...uleb(op)];
export const v128Load = (offset: number) => [...simd(0x00), 4, ...uleb(offset)];
export const v128Zero = [...simd(0x0c), ...new Array<number>(16).fill(0)];
export const F32X4_ADD = simd(0xe4);
export const F32X4_MUL = simd(0xe6);
export const extractLane = (lane: number) => [...simd(0x1f), lane];
export const I32_ADD = 0x6a;
export const I32_SUB = 0x6b;
export const I32_EQZ = 0x45;
export const I32_LT_U = 0x49;
export const F32_ADD = 0x92;
export const F32_STORE = [0x38, 2, 0];
export const BLOCK = [0x02, 0x40];
export const LOOP = [0x03, 0x40];
export const END = 0x0b;
export const brIf = (depth: number) => [0x0d, depth];

/** Locals after the `params` i32 params: two i32, then `vectors` v128. */
export function moduleBytes(body: number[], vectors = 2, params = 5, shared = false): Uint8Array {
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

/** The module `build` assembles, compiled once; null where this runtime cannot run it (no SIMD). */
export function simdModule(build: () => Uint8Array): object | null {
  if (!compiled.has(build)) {
    const bytes = build();
    compiled.set(build, wasm.validate(bytes) ? new wasm.Module(bytes) : null);
  }
  return compiled.get(build) ?? null;
}
