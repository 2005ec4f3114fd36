import path from 'node:path';
import type { StoredJob } from '../../../ports/jobs.js';
import { AppendLog } from './durable/append-log.js';
import { atomicWriteFile, scanLines } from './durable/fs-durable.js';
import { corruptFile, replayJournal } from './durable/journal-replay.js';

export const JOBS_SNAPSHOT_FILE = 'jobs.snapshot.ndjson';
export const JOBS_JOURNAL_FILE = 'jobs.journal.ndjson';

/** The fields a state change may touch; the payload is written once, by `add`. */
export type JobPatch = Pick<StoredJob, 'job_id'> &
  Partial<Pick<StoredJob, 'status' | 'started_at' | 'completed_at' | 'attempts' | 'result' | 'error' | 'heartbeat_at' | 'locked_by'>>;

/**
 * One journal line per queue mutation. A state change journals only the changed fields, so
 * a large import payload is written once, not again on every claim and completion.
 */
export type JobsOp =
  | { op: 'add'; job: StoredJob }
  | { op: 'set'; jobs: JobPatch[] }
  | { op: 'del'; ids: string[] };

type JobsLine = JobsOp & { seq: number };

type SnapshotLine =
  | { t: 'header'; version: 1; seq: number }
  | { t: 'job'; job: StoredJob }
  | { t: 'end'; jobs: number };

/** Applies one op to the in-memory queue: the same code runs live and on replay. */
export function applyJobsOp(jobs: Map<string, StoredJob>, op: JobsOp): void {
  if (op.op === 'add') {
    jobs.set(op.job.job_id, op.job);
  } else if (op.op === 'set') {
    for (const patch of op.jobs) {
      const current = jobs.get(patch.job_id);
      if (current) jobs.set(patch.job_id, { ...current, ...patch });
    }
  } else {
    for (const id of op.ids) jobs.delete(id);
  }
}

/**
 * Durability of the job queue: a snapshot (rewritten atomically) plus a journal of ops, each
 * fsynced before the op is acknowledged. Lines carry sequence numbers and the snapshot
 * records the last one it holds, so a crash between writing a snapshot and emptying the
 * journal replays nothing twice. The caller serialises writes (one at a time).
 */
export class JobsLog {
  private seq = 0;
  /** Journal bytes found at load, until the journal is opened for appending. */
  private loadedBytes = 0;
  /** Opened on the first write, so a store that never queues a job gets no files. */
  private log: AppendLog | null = null;

  private constructor(private readonly dir: string) {}

  /** Loads snapshot then journal into `jobs`; a torn last journal line is cut off. */
  static async open(dir: string, jobs: Map<string, StoredJob>): Promise<JobsLog> {
    const log = new JobsLog(dir);
    const seq = await loadSnapshot(path.join(dir, JOBS_SNAPSHOT_FILE), jobs);
    const replayed = await replayJobsJournal(path.join(dir, JOBS_JOURNAL_FILE), jobs, seq);
    log.seq = replayed.seq;
    log.loadedBytes = replayed.bytes;
    return log;
  }

  /** Journal size in bytes (compaction trigger). */
  get bytes(): number {
    return this.log ? this.log.bytes : this.loadedBytes;
  }

  /** Resolves once the op is on disk. */
  async write(op: JobsOp): Promise<void> {
    const log = await this.appendLog();
    const line: JobsLine = { ...op, seq: this.seq + 1 };
    const text = JSON.stringify(line);
    this.seq++;
    await log.append(text);
  }

  /** Rewrites the snapshot from `jobs` and empties the journal. */
  async compact(jobs: Iterable<StoredJob>): Promise<void> {
    const log = await this.appendLog();
    await log.flush();
    const seq = this.seq;
    function* lines(): Generator<string> {
      yield `${JSON.stringify({ t: 'header', version: 1, seq } satisfies SnapshotLine)}\n`;
      let n = 0;
      for (const job of jobs) {
        n++;
        yield `${JSON.stringify({ t: 'job', job } satisfies SnapshotLine)}\n`;
      }
      yield `${JSON.stringify({ t: 'end', jobs: n } satisfies SnapshotLine)}\n`;
    }
    await atomicWriteFile(path.join(this.dir, JOBS_SNAPSHOT_FILE), lines());
    await log.truncate();
  }

  async close(): Promise<void> {
    await this.log?.close();
  }

  private async appendLog(): Promise<AppendLog> {
    this.log ??= await AppendLog.open(path.join(this.dir, JOBS_JOURNAL_FILE));
    return this.log;
  }
}

/** The snapshot's sequence number (0 without a snapshot). */
async function loadSnapshot(file: string, jobs: Map<string, StoredJob>): Promise<number> {
  let seq = 0;
  let count = 0;
  let ended = false;
  const scan = await scanLines(file, (buf, lineNo) => {
    let line: SnapshotLine;
    try {
      line = JSON.parse(buf.toString('utf8')) as SnapshotLine;
    } catch (err) {
      throw corruptFile(file, lineNo, (err as Error).message);
    }
    if (lineNo === 1) {
      if (line.t !== 'header' || line.version !== 1) throw corruptFile(file, lineNo, 'missing snapshot header');
      seq = line.seq;
    } else if (ended) {
      throw corruptFile(file, lineNo, 'data after the end marker');
    } else if (line.t === 'end') {
      if (line.jobs !== count) throw corruptFile(file, lineNo, `end marker counts ${line.jobs} jobs, found ${count}`);
      ended = true;
    } else if (line.t === 'job') {
      count++;
      jobs.set(line.job.job_id, line.job);
    } else {
      throw corruptFile(file, lineNo, 'unknown line');
    }
  });
  if (scan.completeBytes === 0 && scan.tornBytes === 0) return 0;
  // A snapshot is renamed into place whole: without its end marker it is damaged, not torn.
  if (!ended || scan.tornBytes > 0) throw corruptFile(file, count + 1, 'snapshot is incomplete');
  return seq;
}

/** Replays journal lines newer than the snapshot: the last sequence number, the bytes kept. */
function replayJobsJournal(file: string, jobs: Map<string, StoredJob>, snapshotSeq: number): Promise<{ seq: number; bytes: number }> {
  return replayJournal<JobsLine>(file, snapshotSeq, (line) => applyJobsOp(jobs, line));
}
