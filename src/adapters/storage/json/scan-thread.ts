import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WasmMemory } from './dot-kernel.js';
import { sharedInt8Modules } from './int8-kernel.js';
import { kthLargest, SCORE_BLOCK_ROWS } from './row-selection.js';

/**
 * A second thread for the JSON store's int8 vector scans (Int8Rows), so that on a machine
 * with more than one core a recall's scan (about 0.3 ms at 10k rows, a third of a POST
 * recall's main-thread time) runs beside the main thread's HTTP, ranking and journal work
 * instead of in it.
 *
 * The rows stay where they are: Int8Rows keeps them in a shared WebAssembly memory, which
 * the thread maps once per memory. The thread scores the rows into a lane of that memory
 * that nothing else writes (Int8Rows' layout), in chunks of the lane's size, and posts back
 * only the rows that can be among the `keep` best: those at or above the floor of
 * row-selection.ts selectTopByBlocks (the keep-th best block maximum), with their scores. The
 * caller makes the same choice among them as selectTopByBlocks would among all rows (ties
 * go to the smaller id, which only the caller knows). It reads rows the main thread may be
 * writing meanwhile: the caller (VectorIndex) discards an answer when its rows changed
 * between the request and the answer, and searches on the main thread instead, so a torn
 * read is never used.
 *
 * A fault of the thread (it exits, throws, or cannot start) never fails a search: pending
 * and later requests answer null and the caller scans on the main thread.
 */
export interface ScanJob {
  memory: WasmMemory;
  /** Identifies `memory` to the thread (it keeps one kernel instance per memory). */
  key: number;
  /** The query as the kernel reads it (dot-kernel.ts Int8QueryLayout), copied into the lane as is. */
  query: Uint8Array;
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
  /** The rows scoring at least `floor`, ascending, and their int8 scores. */
  rows: Int32Array;
  scores: Float32Array;
}

/** The thread's code: plain JavaScript, evaluated as the worker's script (no file to find after bundling). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const BLOCK = ${SCORE_BLOCK_ROWS};
const kthLargest = ${kthLargest.toString()};
const kernels = new Map();
// Scratch reused by every scan: a fresh 40 kB array per 10k-row scan cost more than the
// selection itself (allocation, zeroing, its collection later). Grown, never shrunk.
let scores = new Float32Array(0);
let maxima = new Float32Array(0);
let kept = new Int32Array(0);
function scan(k, m) {
  new Uint8Array(k.memory.buffer, m.laneQueryAt, m.query.length).set(m.query);
  const blocks = Math.floor(m.rows / BLOCK);
  if (scores.length < m.rows) scores = new Float32Array(m.rows);
  if (maxima.length < blocks) maxima = new Float32Array(blocks);
  for (let from = 0; from < m.rows; from += m.laneRows) {
    const n = Math.min(m.laneRows, m.rows - from);
    k.dots(m.laneQueryAt, m.rowsAt + from * m.strideBytes, n, m.strideBytes, m.laneScoresAt, m.scalesAt + 4 * from, m.sumsAt + 4 * from);
    scores.set(new Float32Array(k.memory.buffer, m.laneScoresAt, n), from);
    k.maxima(m.laneScoresAt, Math.floor(n / BLOCK), m.laneMaximaAt);
    maxima.set(new Float32Array(k.memory.buffer, m.laneMaximaAt, Math.floor(n / BLOCK)), from / BLOCK);
  }
  // selectTopByBlocks' floor, by its own function.
  const floor = blocks >= m.keep ? kthLargest(maxima, blocks, m.keep) : -Infinity;
  let count = 0;
  const keep = (r) => {
    if (count === kept.length) {
      const grown = new Int32Array(Math.max(256, 2 * count));
      grown.set(kept);
      kept = grown;
    }
    kept[count++] = r;
  };
  for (let b = 0; b < blocks; b++) {
    if (maxima[b] < floor) continue;
    for (let r = b * BLOCK; r < (b + 1) * BLOCK; r++) if (scores[r] >= floor) keep(r);
  }
  for (let r = blocks * BLOCK; r < m.rows; r++) if (scores[r] >= floor) keep(r);
  const rows = kept.slice(0, count);
  const rowScores = new Float32Array(count);
  for (let i = 0; i < count; i++) rowScores[i] = scores[rows[i]];
  parentPort.postMessage({ id: m.id, floor, rows, scores: rowScores }, [rows.buffer, rowScores.buffer]);
}
parentPort.on('message', (m) => {
  if (m.type === 'drop') { kernels.delete(m.key); return; }
  try {
    let k = kernels.get(m.key);
    if (!k) {
      const env = { env: { mem: m.memory } };
      k = {
        memory: m.memory,
        dots: new WebAssembly.Instance(workerData.dots, env).exports.dots,
        maxima: new WebAssembly.Instance(workerData.maxima, env).exports.dots,
      };
      kernels.set(m.key, k);
    }
    scan(k, m);
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: String(err && err.message || err) });
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

interface Answer {
  id: number;
  floor?: number;
  rows?: Int32Array;
  scores?: Float32Array;
  error?: string;
}

export class ScanThread {
  private worker: Worker | null = null;
  private starts = 0;
  private nextId = 1;
  private readonly pending = new Map<number, (result: ScanResult | null) => void>();
  /** Memory keys the current worker has been sent. */
  private readonly known = new Set<number>();

  /** When two searches last overlapped (ms on `now`'s clock). */
  private overlappedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly modules: { dots: object; maxima: object },
    private readonly now: () => number = () => performance.now(),
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

  /** The rows of the job that can be among its `keep` best, or null when the thread could not give them. */
  scan(job: ScanJob): Promise<ScanResult | null> {
    const worker = this.running();
    if (!worker) return Promise.resolve(null);
    const id = this.nextId++;
    const { memory, key, ...rest } = job;
    const first = !this.known.has(key);
    this.known.add(key);
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      // Held while a request waits, so a command whose only work left is this scan does not exit.
      worker.ref();
      try {
        worker.postMessage({ ...rest, id, key, memory: first ? memory : undefined });
      } catch {
        this.known.delete(key);
        this.answered({ id });
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
    this.settleAll();
    if (worker) await worker.terminate();
  }

  private running(): Worker | null {
    if (this.worker) return this.worker;
    if (this.starts >= MAX_STARTS) return null;
    this.starts++;
    try {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: this.modules });
      worker.unref();
      worker.on('message', (answer: Answer) => this.answered(answer));
      // An error ends the worker ('exit' follows); either way its pending requests answer null.
      worker.on('error', () => this.lost(worker));
      worker.on('exit', () => this.lost(worker));
      this.worker = worker;
      this.known.clear();
      return worker;
    } catch {
      return null;
    }
  }

  private answered(answer: Answer): void {
    const resolve = this.pending.get(answer.id);
    if (!resolve) return;
    this.pending.delete(answer.id);
    if (this.pending.size === 0) this.worker?.unref();
    resolve(answer.rows && answer.scores && answer.floor !== undefined ? { floor: answer.floor, rows: answer.rows, scores: answer.scores } : null);
  }

  private lost(worker: Worker): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.settleAll();
  }

  private settleAll(): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const resolve of waiting) resolve(null);
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
