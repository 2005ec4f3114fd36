/**
 * The scan thread's mailbox (scan-thread.ts): each scan under way has a slot of shared memory
 * that holds its job (the fields of ScanJob and the query's bytes) and, once the thread is
 * done, its answer (the kept rows and their scores). A message to the thread carries only the
 * slot's index, the reply only the job's id: structured-cloning the job as an object and
 * transferring the answer's two arrays cost about 17 µs of CPU per scan (object rest and
 * spread, a fresh off-heap buffer for the query, two buffers detached and adopted), 3 µs this
 * way.
 *
 * A slot belongs to one job from `acquire` until `release`; the thread writes a slot only
 * between receiving its index and posting the job's id back, so the two threads never write
 * a slot at once. Message passing orders the writes: each side reads what the other wrote
 * before it posted.
 */

/** Int32 fields of a slot's header. */
export const SLOT_FIELD = {
  id: 0,
  key: 1,
  rowsAt: 2,
  rows: 3,
  keep: 4,
  strideBytes: 5,
  scalesAt: 6,
  sumsAt: 7,
  laneQueryAt: 8,
  laneScoresAt: 9,
  laneMaximaAt: 10,
  laneRows: 11,
  queryBytes: 12,
  /** The answer: one of SLOT_STATUS. */
  status: 13,
  /** The answer: how many rows were kept. */
  count: 14,
} as const;

export const SLOT_STATUS = {
  pending: 0,
  done: 1,
  /** More rows reached the floor than the slot holds: the caller scans on its own thread. */
  overflow: 2,
  failed: 3,
} as const;

/** Where the answer's floor (a double) is, in bytes from the slot's start. */
export const SLOT_FLOOR_AT = 64;
/** Where the query's bytes are. */
export const SLOT_QUERY_AT = 128;

export interface SlotLimits {
  /** The longest query a slot holds, in bytes (an i16 query of 384 dimensions is 768). */
  queryBytes: number;
  /** The most rows an answer holds (the rows at or above the floor: usually a few hundred). */
  rows: number;
}

/** A 4,096-dimension i16 query, 4,096 kept rows: about 40 kB a slot. */
export const DEFAULT_SLOT_LIMITS: SlotLimits = { queryBytes: 8192, rows: 4096 };

/** The byte offsets of a slot's parts, for `limits`: the same arithmetic on both threads. */
export function slotLayout(limits: SlotLimits): { rowsAt: number; scoresAt: number; bytes: number } {
  const rowsAt = SLOT_QUERY_AT + Math.ceil(limits.queryBytes / 16) * 16;
  const scoresAt = rowsAt + 4 * limits.rows;
  return { rowsAt, scoresAt, bytes: scoresAt + 4 * limits.rows };
}

/** One slot's memory and the views both threads read it through. */
export class Slot {
  readonly header: Int32Array;
  readonly floor: Float64Array;
  readonly rows: Int32Array;
  readonly scores: Float32Array;

  constructor(readonly index: number, readonly buffer: SharedArrayBuffer, limits: SlotLimits) {
    const layout = slotLayout(limits);
    this.header = new Int32Array(buffer, 0, SLOT_QUERY_AT / 4);
    this.floor = new Float64Array(buffer, SLOT_FLOOR_AT, 1);
    this.rows = new Int32Array(buffer, layout.rowsAt, limits.rows);
    this.scores = new Float32Array(buffer, layout.scoresAt, limits.rows);
  }
}

/**
 * The slots of one thread's life, made on demand up to `max` (past it, a scan stays on the
 * caller's thread). A restarted thread gets a new set: the old thread may still have been
 * writing one of the old slots when it was given up.
 */
export class SlotPool {
  private readonly slots: Slot[] = [];
  private readonly free: Slot[] = [];

  constructor(readonly limits: SlotLimits, private readonly max: number) {}

  /** A free slot, and whether it is new (the thread has not been sent its memory yet); null when all are taken. */
  acquire(): { slot: Slot; fresh: boolean } | null {
    const reused = this.free.pop();
    if (reused) return { slot: reused, fresh: false };
    if (this.slots.length >= this.max) return null;
    const slot = new Slot(this.slots.length, new SharedArrayBuffer(slotLayout(this.limits).bytes), this.limits);
    this.slots.push(slot);
    return { slot, fresh: true };
  }

  release(slot: Slot): void {
    this.free.push(slot);
  }
}
