import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { WasmMemory } from './dot-kernel.js';
import { sharedInt8Modules } from './int8-kernel.js';
import { DEFAULT_SLOT_LIMITS, Slot, SLOT_FIELD, SLOT_QUERY_AT, SLOT_STATUS, SlotPool, type SlotLimits } from './scan-slots.js';
import type { ScanWorkerData, ScanWorkerMessage } from './scan-worker.js';

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
 * read is never used. Jobs and answers pass through shared slots (scan-slots.ts); the thread's
 * own code is scan-worker.ts.
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

/** How to start the thread's code (scan-worker.ts): its module, and any options Node needs for it. */
export interface WorkerScript {
  url: URL;
  execArgv?: string[];
}

/**
 * The scan worker beside this module: scan-worker.js in a build (dist/src/… from tsc, and
 * dist/cli/ beside the command line's bundled chunks: scripts/bundle-cli.mjs bundles it there
 * too). Where this module runs as TypeScript source (under vitest), the worker is the .ts file
 * beside it, which a worker of Node 20 can load only through the project's source loader
 * (scripts/ts-source-loader.mjs, compiling TypeScript as it loads); a build never needs it.
 */
export function scanWorkerScript(here: string = import.meta.url): WorkerScript {
  if (!here.endsWith('.ts')) return { url: new URL('./scan-worker.js', here) };
  const loader = new URL('../../../../../scripts/ts-source-loader.mjs', here);
  return { url: new URL('./scan-worker.ts', here), execArgv: [...process.execArgv, '--import', loader.href] };
}

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
    private readonly script: WorkerScript = scanWorkerScript(),
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
        if (fresh) post(worker, { type: 'slot', index: slot.index, buffer: slot.buffer });
        if (!this.known.has(job.key)) {
          post(worker, { type: 'memory', key: job.key, memory: job.memory });
          this.known.add(job.key);
        }
        post(worker, slot.index);
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
    if (this.worker) post(this.worker, { type: 'drop', key });
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
      const workerData: ScanWorkerData = { ...this.modules, limits: this.limits };
      const worker = new Worker(this.script.url, { workerData, execArgv: this.script.execArgv });
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

/** A message to the thread: a slot's index (run its job), or one of scan-worker.ts's messages. */
function post(worker: Worker, message: number | ScanWorkerMessage): void {
  worker.postMessage(message);
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
