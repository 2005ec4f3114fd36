import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WasmMemory } from './dot-kernel.js';
import { sharedInt8Modules } from './int8-kernel.js';
import { kthLargest, SCORE_BLOCK_ROWS } from './row-selection.js';
import { DEFAULT_SLOT_LIMITS, Slot, SLOT_FIELD, SLOT_FLOOR_AT, SLOT_QUERY_AT, SLOT_STATUS, slotLayout, SlotPool, type SlotLimits } from './scan-slots.js';

/**
 * A second thread for the JSON store's int8 vector scans (Int8Rows), so that on a machine
 * with more than one core a recall's scan (about 0.3 ms at 10k rows, a third of a POST
 * recall's main-thread time) runs beside the main thread's HTTP, ranking and journal work
 * instead of in it.
 *
 * The rows stay where they are: Int8Rows keeps them in a shared WebAssembly memory, which
 * the thread maps once per memory. The thread scores the rows into a lane of that memory
 * that nothing else writes (Int8Rows' layout), in chunks of the lane's size, and answers
 * only the rows that can be among the `keep` best: those at or above the floor of
 * row-selection.ts selectTopByBlocks (the keep-th best block maximum), with their scores. The
 * caller makes the same choice among them as selectTopByBlocks would among all rows (ties
 * go to the smaller id, which only the caller knows). It reads rows the main thread may be
 * writing meanwhile: the caller (VectorIndex) discards an answer when its rows changed
 * between the request and the answer, and searches on the main thread instead, so a torn
 * read is never used. Jobs and answers pass through shared slots (scan-slots.ts).
 *
 * A fault of the thread (it exits, throws, or cannot start) never fails a search: pending
 * and later requests answer null and the caller scans on the main thread.
 */
export interface ScanJob {
  memory: WasmMemory;
  /** Identifies `memory` to the thread (it keeps one kernel instance per memory). */
  key: number;
  /** The query's length in bytes as the kernel reads it (dot-kernel.ts Int8QueryLayout). */
  queryBytes: number;
  /** Writes the query in that layout at byte `at` of `buffer` (the thread copies it into the lane as is). */
  writeQuery(buffer: SharedArrayBuffer, at: number): void;
  rowsAt: number;
  rows: number;
  /** How many best rows the caller will keep (the floor is the keep-th best block maximum). */
  keep: number;
  strideBytes: number;
  scalesAt: number;
  /** The rows' byte sums (the relaxed kernel's offset correction). */
  sumsAt: number;
  laneQueryAt: number;
  laneScoresAt: number;
  laneMaximaAt: number;
  /** Rows scored per kernel call: the lane's capacity, a multiple of the block size. */
  laneRows: number;
}

export interface ScanResult {
  /** No row below it can be among the `keep` best (-Infinity: too few blocks to tell). */
  floor: number;
  /** The rows scoring at least `floor`, ascending, and their int8 scores: views of the job's slot, valid until `release`. */
  rows: Int32Array;
  scores: Float32Array;
  /**
   * Gives the slot back for another job; the views must not be read after. Until then the slot
   * is the caller's: the answer is read in place instead of copied out (two buffers a scan).
   */
  release(): void;
}

/** The job's fields the thread reads from the slot's header, in SLOT_FIELD's names. */
const JOB_FIELDS = ['key', 'rowsAt', 'rows', 'keep', 'strideBytes', 'scalesAt', 'sumsAt', 'laneQueryAt', 'laneScoresAt', 'laneMaximaAt', 'laneRows', 'queryBytes'] as const;

/**
 * The thread's code: plain JavaScript, evaluated as the worker's script (no file to find after
 * bundling). A number from the main thread is a slot's index: the thread runs the slot's job,
 * writes its answer there and posts the job's id back. Objects announce a slot's memory, a
 * WebAssembly memory by its key, or that a memory is gone.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const BLOCK = ${SCORE_BLOCK_ROWS};
const F = ${JSON.stringify(SLOT_FIELD)};
const STATUS = ${JSON.stringify(SLOT_STATUS)};
const kthLargest = ${kthLargest.toString()};
const { limits, layout } = workerData;
const memories = new Map();
const kernels = new Map();
const slots = [];
// Scratch reused by every scan: a fresh 40 kB array per 10k-row scan cost more than the
// selection itself (allocation, zeroing, its collection later). Grown, never shrunk.
let scores = new Float32Array(0);
let maxima = new Float32Array(0);
function slotViews(buffer) {
  return {
    header: new Int32Array(buffer, 0, ${SLOT_QUERY_AT / 4}),
    floor: new Float64Array(buffer, ${SLOT_FLOOR_AT}, 1),
    query: new Uint8Array(buffer, ${SLOT_QUERY_AT}, limits.queryBytes),
    rows: new Int32Array(buffer, layout.rowsAt, limits.rows),
    scores: new Float32Array(buffer, layout.scoresAt, limits.rows),
  };
}
function kernelOf(key) {
  let k = kernels.get(key);
  if (k) return k;
  const memory = memories.get(key);
  if (!memory) throw new Error('no memory of key ' + key);
  const env = { env: { mem: memory } };
  k = {
    memory,
    dots: new WebAssembly.Instance(workerData.dots, env).exports.dots,
    maxima: new WebAssembly.Instance(workerData.maxima, env).exports.dots,
  };
  kernels.set(key, k);
  return k;
}
function scan(slot) {
  const h = slot.header;
  const k = kernelOf(h[F.key]);
  const n = h[F.rows], laneRows = h[F.laneRows], stride = h[F.strideBytes], keepBest = h[F.keep];
  const laneScoresAt = h[F.laneScoresAt], laneMaximaAt = h[F.laneMaximaAt];
  new Uint8Array(k.memory.buffer, h[F.laneQueryAt], h[F.queryBytes]).set(slot.query.subarray(0, h[F.queryBytes]));
  const blocks = Math.floor(n / BLOCK);
  if (scores.length < n) scores = new Float32Array(n);
  if (maxima.length < blocks) maxima = new Float32Array(blocks);
  for (let from = 0; from < n; from += laneRows) {
    const m = Math.min(laneRows, n - from);
    k.dots(h[F.laneQueryAt], h[F.rowsAt] + from * stride, m, stride, laneScoresAt, h[F.scalesAt] + 4 * from, h[F.sumsAt] + 4 * from);
    scores.set(new Float32Array(k.memory.buffer, laneScoresAt, m), from);
    k.maxima(laneScoresAt, Math.floor(m / BLOCK), laneMaximaAt);
    maxima.set(new Float32Array(k.memory.buffer, laneMaximaAt, Math.floor(m / BLOCK)), from / BLOCK);
  }
  // selectTopByBlocks' floor, by its own function.
  const floor = blocks >= keepBest ? kthLargest(maxima, blocks, keepBest) : -Infinity;
  const rows = slot.rows, rowScores = slot.scores;
  let count = 0;
  for (let b = 0; b <= blocks; b++) {
    if (b < blocks && maxima[b] < floor) continue;
    const end = b < blocks ? (b + 1) * BLOCK : n;
    for (let r = b * BLOCK; r < end; r++) {
      if (!(scores[r] >= floor)) continue;
      if (count === limits.rows) return STATUS.overflow;
      rows[count] = r;
      rowScores[count++] = scores[r];
    }
  }
  h[F.count] = count;
  slot.floor[0] = floor;
  return STATUS.done;
}
parentPort.on('message', (m) => {
  if (typeof m === 'number') {
    const slot = slots[m];
    let status = STATUS.failed;
    try {
      status = scan(slot);
    } catch {}
    slot.header[F.status] = status;
    parentPort.postMessage(slot.header[F.id]);
  } else if (m.type === 'slot') {
    slots[m.index] = slotViews(m.buffer);
  } else if (m.type === 'memory') {
    memories.set(m.key, m.memory);
  } else if (m.type === 'drop') {
    memories.delete(m.key);
    kernels.delete(m.key);
  }
});
`;

/**
 * How long after two searches overlapped a lone one still goes to the thread. Far longer than
 * the gaps between the searches of a loaded process (about 0.6 ms at 1,600 recalls a second),
 * far shorter than a quiet one's: one client's recalls one after another never overlap.
 */
const LOAD_WINDOW_MS = 50;

/** Restarts after the thread died; past this many, scans stay on the main thread. */
const MAX_STARTS = 3;

/** Scans under way at once at most (one a slot); past it a scan stays on the main thread. */
export const MAX_SCAN_SLOTS = 64;

interface Pending {
  slot: Slot;
  pool: SlotPool;
  resolve: (result: ScanResult | null) => void;
}

export class ScanThread {
  private worker: Worker | null = null;
  /** The current worker's slots (a restarted worker gets new ones). */
  private slots: SlotPool | null = null;
  private starts = 0;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Memory keys the current worker has been sent. */
  private readonly known = new Set<number>();

  /** When two searches last overlapped (ms on `now`'s clock). */
  private overlappedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly modules: { dots: object; maxima: object },
    private readonly now: () => number = () => performance.now(),
    private readonly limits: SlotLimits = DEFAULT_SLOT_LIMITS,
  ) {}

  /**
   * Whether a search should go to the thread when `searches` searches (itself included) are
   * under way in this process. A lone search of a quiet process stays on the main thread:
   * handing a lone scan over costs more than it frees (two thread wake-ups, the rows read into
   * another core's cache: one connection's recall went from 1.5 to 1.8 ms at 10k, and its CPU
   * from 1.38 to 1.72 ms). With others under way, the main thread has their work to do
   * meanwhile; and for LOAD_WINDOW_MS after two searches overlapped the process is under load,
   * so every search goes: a search finds another under way only while that one waits for the
   * thread, and under load the main thread is the bottleneck, yet a sixth of the scans of a
   * 16-connection POST recall run still started alone and ran here (6 % of its time).
   */
  wanted(searches: number): boolean {
    const now = this.now();
    if (searches > 1) {
      this.overlappedAt = now;
      return true;
    }
    return now - this.overlappedAt < LOAD_WINDOW_MS;
  }

  /**
   * The rows of the job that can be among its `keep` best, or null when the thread could not
   * give them: no thread, every slot taken, a query longer than a slot holds, more rows at the
   * floor than a slot holds, or the scan failed. An answer holds its slot until released.
   */
  scan(job: ScanJob): Promise<ScanResult | null> {
    if (job.queryBytes > this.limits.queryBytes) return Promise.resolve(null);
    const worker = this.running();
    const pool = this.slots;
    const taken = worker && pool ? pool.acquire() : null;
    if (!worker || !pool || !taken) return Promise.resolve(null);
    const { slot, fresh } = taken;
    const id = this.nextId++;
    const header = slot.header;
    header[SLOT_FIELD.id] = id;
    for (const field of JOB_FIELDS) header[SLOT_FIELD[field]] = job[field];
    header[SLOT_FIELD.status] = SLOT_STATUS.pending;
    job.writeQuery(slot.buffer, SLOT_QUERY_AT);
    return new Promise((resolve) => {
      this.pending.set(id, { slot, pool, resolve });
      // Held while a request waits, so a command whose only work left is this scan does not exit.
      worker.ref();
      try {
        if (fresh) worker.postMessage({ type: 'slot', index: slot.index, buffer: slot.buffer });
        if (!this.known.has(job.key)) {
          worker.postMessage({ type: 'memory', key: job.key, memory: job.memory });
          this.known.add(job.key);
        }
        worker.postMessage(slot.index);
      } catch {
        // The worker may now lack a slot or a memory it will be asked for: start afresh.
        this.lost(worker);
        void worker.terminate();
      }
    });
  }

  /** The memory behind `key` is gone: the thread lets go of its kernels (and its mapping). */
  drop(key: number): void {
    if (!this.known.delete(key)) return;
    this.worker?.postMessage({ type: 'drop', key });
  }

  /** Requests sent and not answered yet (tests wait on this). */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Ends the thread; pending requests answer null (tests; a later scan starts a new one). */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.slots = null;
    this.settleAll();
    if (worker) await worker.terminate();
  }

  private running(): Worker | null {
    if (this.worker) return this.worker;
    if (this.starts >= MAX_STARTS) return null;
    this.starts++;
    try {
      const { rowsAt, scoresAt } = slotLayout(this.limits);
      const workerData = { ...this.modules, limits: this.limits, layout: { rowsAt, scoresAt } };
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
      worker.unref();
      worker.on('message', (id: number) => this.answered(id));
      // An error ends the worker ('exit' follows); either way its pending requests answer null.
      worker.on('error', () => this.lost(worker));
      worker.on('exit', () => this.lost(worker));
      this.worker = worker;
      this.slots = new SlotPool(this.limits, MAX_SCAN_SLOTS);
      this.known.clear();
      return worker;
    } catch {
      return null;
    }
  }

  private answered(id: number): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker?.unref();
    const { slot, pool, resolve } = entry;
    const header = slot.header;
    if (header[SLOT_FIELD.status] !== SLOT_STATUS.done) {
      pool.release(slot);
      resolve(null);
      return;
    }
    const count = header[SLOT_FIELD.count];
    resolve({
      floor: slot.floor[0],
      rows: slot.rows.subarray(0, count),
      scores: slot.scores.subarray(0, count),
      release: () => pool.release(slot),
    });
  }

  private lost(worker: Worker): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.slots = null;
    this.settleAll();
  }

  private settleAll(): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const { resolve } of waiting) resolve(null);
  }
}

let shared: ScanThread | null | undefined;

/**
 * The process's scan thread, or null where it cannot help: one core (the scan would only
 * take turns with the main thread), or no shared WebAssembly memory.
 */
export function defaultScanThread(): ScanThread | null {
  if (shared === undefined) {
    const modules = availableParallelism() > 1 ? sharedInt8Modules() : null;
    shared = modules ? new ScanThread(modules) : null;
  }
  return shared;
}
