/**
 * The scan thread's own code (scan-thread.ts starts it as a worker; never imported). A number
 * from the main thread is a slot's index: the thread runs the slot's job, writes its answer
 * there and posts the job's id back. The other messages (ScanWorkerMessage) announce a slot's
 * memory, a WebAssembly memory by its key, or that a memory is gone.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { kthLargest, SCORE_BLOCK_ROWS } from './row-selection.js';
import { Slot, SLOT_FIELD, SLOT_QUERY_AT, SLOT_STATUS, type SlotLimits } from './scan-slots.js';
import { wasm, type WasmMemory } from './wasm-assembly.js';

/** What the thread is started with: the compiled kernels (shared-memory modules) and the slots' size. */
export interface ScanWorkerData {
  dots: object;
  maxima: object;
  limits: SlotLimits;
}

/** The messages besides a slot's index. */
export type ScanWorkerMessage =
  | { type: 'slot'; index: number; buffer: SharedArrayBuffer }
  | { type: 'memory'; key: number; memory: WasmMemory }
  | { type: 'drop'; key: number };

type KernelFn = (...args: number[]) => void;

interface Kernels {
  memory: WasmMemory;
  dots: KernelFn;
  maxima: KernelFn;
}

/** A slot as the thread reads it: the shared views, and the query's bytes. */
interface SlotViews {
  slot: Slot;
  query: Uint8Array;
}

const port = parentPort;
if (!port) throw new Error('scan-worker runs as the scan thread (scan-thread.ts), not as an import');
const { dots, maxima: maximaModule, limits } = workerData as ScanWorkerData;

const memories = new Map<number, WasmMemory>();
const kernels = new Map<number, Kernels>();
const slots: SlotViews[] = [];
// Scratch reused by every scan: a fresh 40 kB array per 10k-row scan cost more than the
// selection itself (allocation, zeroing, its collection later). Grown, never shrunk.
let scores = new Float32Array(0);
let maxima = new Float32Array(0);

/** The kernels bound to the memory of `key`, instantiated once per memory. */
function kernelOf(key: number): Kernels {
  const known = kernels.get(key);
  if (known) return known;
  const memory = memories.get(key);
  if (!memory) throw new Error(`no memory of key ${key}`);
  const env = { env: { mem: memory } };
  const made = {
    memory,
    dots: new wasm.Instance(dots, env).exports.dots as KernelFn,
    maxima: new wasm.Instance(maximaModule, env).exports.dots as KernelFn,
  };
  kernels.set(key, made);
  return made;
}

/**
 * Scores the job's rows chunk by chunk in its lane, then keeps the rows at or above the floor
 * of row-selection.ts selectTopByBlocks (the keep-th best block maximum, by its own
 * kthLargest), ascending, with their scores.
 */
function scan({ slot, query }: SlotViews): number {
  const h = slot.header;
  const k = kernelOf(h[SLOT_FIELD.key]);
  const n = h[SLOT_FIELD.rows];
  const laneRows = h[SLOT_FIELD.laneRows];
  const stride = h[SLOT_FIELD.strideBytes];
  const keepBest = h[SLOT_FIELD.keep];
  const laneQueryAt = h[SLOT_FIELD.laneQueryAt];
  const laneScoresAt = h[SLOT_FIELD.laneScoresAt];
  const laneMaximaAt = h[SLOT_FIELD.laneMaximaAt];
  const queryBytes = h[SLOT_FIELD.queryBytes];
  new Uint8Array(k.memory.buffer, laneQueryAt, queryBytes).set(query.subarray(0, queryBytes));
  const blocks = Math.floor(n / SCORE_BLOCK_ROWS);
  if (scores.length < n) scores = new Float32Array(n);
  if (maxima.length < blocks) maxima = new Float32Array(blocks);
  for (let from = 0; from < n; from += laneRows) {
    const m = Math.min(laneRows, n - from);
    k.dots(laneQueryAt, h[SLOT_FIELD.rowsAt] + from * stride, m, stride, laneScoresAt, h[SLOT_FIELD.scalesAt] + 4 * from, h[SLOT_FIELD.sumsAt] + 4 * from);
    scores.set(new Float32Array(k.memory.buffer, laneScoresAt, m), from);
    const laneBlocks = Math.floor(m / SCORE_BLOCK_ROWS);
    k.maxima(laneScoresAt, laneBlocks, laneMaximaAt);
    maxima.set(new Float32Array(k.memory.buffer, laneMaximaAt, laneBlocks), from / SCORE_BLOCK_ROWS);
  }
  const floor = blocks >= keepBest ? kthLargest(maxima, blocks, keepBest) : Number.NEGATIVE_INFINITY;
  let count = 0;
  for (let b = 0; b <= blocks; b++) {
    if (b < blocks && maxima[b] < floor) continue;
    const end = b < blocks ? (b + 1) * SCORE_BLOCK_ROWS : n;
    for (let r = b * SCORE_BLOCK_ROWS; r < end; r++) {
      if (!(scores[r] >= floor)) continue;
      if (count === limits.rows) return SLOT_STATUS.overflow;
      slot.rows[count] = r;
      slot.scores[count++] = scores[r];
    }
  }
  h[SLOT_FIELD.count] = count;
  slot.floor[0] = floor;
  return SLOT_STATUS.done;
}

port.on('message', (m: number | ScanWorkerMessage) => {
  if (typeof m === 'number') {
    const views = slots[m];
    let status: number = SLOT_STATUS.failed;
    try {
      status = scan(views);
    } catch {
      // A scan that throws answers `failed`: the caller searches on its own thread.
    }
    views.slot.header[SLOT_FIELD.status] = status;
    port.postMessage(views.slot.header[SLOT_FIELD.id]);
  } else if (m.type === 'slot') {
    slots[m.index] = { slot: new Slot(m.index, m.buffer, limits), query: new Uint8Array(m.buffer, SLOT_QUERY_AT, limits.queryBytes) };
  } else if (m.type === 'memory') {
    memories.set(m.key, m.memory);
  } else if (m.type === 'drop') {
    memories.delete(m.key);
    kernels.delete(m.key);
  }
});
