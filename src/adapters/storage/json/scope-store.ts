import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { AppendLog } from './durable/append-log.js';
import { atomicWriteFile, ensureDirDurable, removeStaleTemps, scanLines } from './durable/fs-durable.js';
import type { JournalLine, JournalOp, SnapshotLine } from './journal-ops.js';
import { ScopeState } from './scope-state.js';
import { corruptFile, replayJournal } from './durable/journal-replay.js';

export const JOURNAL_FILE = 'journal.ndjson';
export const SNAPSHOT_FILE = 'snapshot.ndjson';

const RELOAD_ATTEMPTS = 4;
const RELOAD_RETRY_MS = 250;

export interface ScopeStoreOptions {
  /** Compact once the journal reaches this many bytes AND is at least as big as the snapshot. */
  compactAfterBytes: number;
  preferJsKernel: boolean;
}

/** A prepared mutation: the op to journal and, for vector ops, the unit vector to index. */
export interface Prepared {
  op: JournalOp;
  vector?: Float32Array;
}

/**
 * Durability for one scope: snapshot + journal on disk, ScopeState in memory.
 * A mutation is validated against the current state, applied, appended to the journal and
 * acknowledged after fdatasync. Lines carry a sequence number; the snapshot records the last
 * one it contains, so a crash between writing a snapshot and truncating the journal replays
 * nothing twice. While a compaction writes the snapshot, mutations wait (the snapshot is a
 * consistent point in time); reads continue.
 */
export class ScopeStore {
  private current: ScopeState;
  private log: AppendLog | null = null;
  /** Set from a failed journal write until memory is reloaded from disk (mutations wait). */
  private recovering: Promise<void> | null = null;
  /** A reload that failed: the next writer starts it again before writing. */
  private reloadPending: AppendLog | null = null;
  private opening: Promise<AppendLog> | null = null;
  private seq = 0;
  private snapshotBytes = 0;
  private nextCompactAt: number;
  private compacting: Promise<void> | null = null;
  private compactionError: Error | null = null;

  private constructor(
    readonly dir: string,
    private readonly opts: ScopeStoreOptions,
  ) {
    this.current = new ScopeState(opts.preferJsKernel);
    this.nextCompactAt = opts.compactAfterBytes;
  }

  /** The in-memory state; replaced whole when a failed write forces a reload from disk. */
  get state(): ScopeState {
    return this.current;
  }

  /** A scope with nothing on disk yet; its directory is created by the first write. */
  static empty(dir: string, opts: ScopeStoreOptions): ScopeStore {
    return new ScopeStore(dir, opts);
  }

  /** Replays snapshot then journal; a torn last journal line is dropped from the file. */
  static async load(dir: string, opts: ScopeStoreOptions): Promise<ScopeStore> {
    await removeStaleTemps(dir);
    const store = new ScopeStore(dir, opts);
    await store.loadSnapshot();
    await store.replayJournal();
    return store;
  }

  /** Set when the journal can no longer be written (the scope must be reopened). */
  get error(): Error | null {
    return this.log?.error ?? null;
  }

  /** The last compaction failure, if the latest attempt failed (the journal stays authoritative). */
  get lastCompactionError(): Error | null {
    return this.compactionError;
  }

  /**
   * Runs `prepare` against the current state (it validates and may throw, or return null for
   * a no-op), applies the result and resolves once its journal line is durable.
   */
  async mutate(prepare: () => Prepared | null): Promise<void> {
    let wait: Promise<unknown> | null;
    while ((wait = this.blocker()) !== null) await wait;
    // From the check above to log.append below there is no await: a compaction cannot start
    // in between, so the snapshot never sees half of a mutation.
    const prepared = prepare();
    if (!prepared) return;
    const log = this.log!;
    if (log.error) throw log.error;
    const line: JournalLine = { ...prepared.op, seq: ++this.seq };
    const text = JSON.stringify(line);
    this.state.apply(prepared.op, prepared.vector);
    try {
      await log.append(text);
    } catch (err) {
      // The caller hears of the failure only once memory no longer shows the refused write.
      await this.recovering?.catch(() => undefined);
      throw err;
    }
    this.maybeCompact();
  }

  /** Writes a snapshot now and empties the journal (normally triggered by journal size). */
  async compact(): Promise<void> {
    let wait: Promise<unknown> | null;
    while ((wait = this.blocker()) !== null) await wait;
    const run = this.runCompaction();
    // Waiting writers must not see this caller's failure: `compacting` never rejects.
    this.compacting = run.then(
      () => undefined,
      () => undefined,
    ).finally(() => (this.compacting = null));
    await run;
  }

  async close(): Promise<void> {
    while (this.compacting) await this.compacting;
    if (this.recovering) await this.recovering;
    if (this.opening) await this.opening.catch(() => undefined);
    await this.log?.close();
  }

  /**
   * What a writer must wait for (a running compaction, the journal opening), or null when it
   * may write now. Callers re-check after every wait and then proceed without awaiting.
   */
  private blocker(): Promise<unknown> | null {
    if (!this.recovering && this.reloadPending) this.startRecovery(this.reloadPending);
    if (this.recovering) return this.recovering;
    if (this.compacting) return this.compacting;
    return this.log ? null : this.openLog();
  }

  private maybeCompact(): void {
    const log = this.log;
    if (!log || this.compacting || log.error) return;
    if (log.bytes < this.nextCompactAt || log.bytes < this.snapshotBytes) return;
    this.compacting = this.runCompaction()
      .then(
        () => {
          this.compactionError = null;
        },
        (err: unknown) => {
          // Nothing is lost: the journal still holds every line. Retry after more growth.
          this.compactionError = err instanceof Error ? err : new Error(String(err));
          this.nextCompactAt = log.bytes + this.opts.compactAfterBytes;
        },
      )
      .finally(() => (this.compacting = null));
  }

  private async runCompaction(): Promise<void> {
    const log = this.log!;
    await log.flush();
    if (log.error) throw log.error;
    this.snapshotBytes = await atomicWriteFile(path.join(this.dir, SNAPSHOT_FILE), this.state.snapshotLines(this.seq));
    await log.truncate();
    this.nextCompactAt = this.opts.compactAfterBytes;
  }

  private openLog(): Promise<AppendLog> {
    this.opening ??= (async () => {
      await ensureDirDurable(this.dir);
      const log = await AppendLog.open(path.join(this.dir, JOURNAL_FILE));
      // Synchronously with the failure: no mutation can slip in before recovery is under way.
      log.onWriteFailure = () => this.startRecovery(log);
      this.log = log;
      return log;
    })().catch((err: unknown) => {
      this.opening = null; // e.g. a permission problem fixed later: the next write retries
      throw err;
    });
    return this.opening;
  }

  private startRecovery(log: AppendLog): void {
    this.reloadPending = null;
    this.recovering ??= this.recover(log)
      .catch((err: unknown) => {
        this.reloadPending = log;
        throw err;
      })
      .finally(() => (this.recovering = null));
    this.recovering.catch(() => undefined);
  }

  /**
   * After a failed journal write, memory holds mutations that never became durable
   * (docs/behavior.md "Faults"): they must not stay visible. Reload snapshot + journal from disk into a fresh state.
   * The log has cut itself back to its durable size; if it could not, it is dropped and the
   * next write reopens it (the reopen trims a torn tail).
   */
  private async recover(log: AppendLog): Promise<void> {
    await log.flush();
    if (log.error) {
      await log.close().catch(() => undefined);
      if (this.log === log) {
        this.log = null;
        this.opening = null;
      }
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const fresh = await ScopeStore.load(this.dir, this.opts);
        this.current = fresh.current;
        this.seq = fresh.seq;
        this.snapshotBytes = fresh.snapshotBytes;
        return;
      } catch (err) {
        // Reading may fail under the same fault; until it succeeds writers keep waiting.
        if (attempt >= RELOAD_ATTEMPTS) throw err;
        await sleep(RELOAD_RETRY_MS);
      }
    }
  }

  private async loadSnapshot(): Promise<void> {
    const file = path.join(this.dir, SNAPSHOT_FILE);
    let lines = 0;
    let ended = false;
    const scan = await scanLines(file, (buf, lineNo) => {
      const line = parseLine<SnapshotLine>(buf, file, lineNo);
      lines++;
      if (lineNo === 1) {
        if (line.t !== 'header' || line.version !== 1) throw corruptFile(file, lineNo, 'missing snapshot header');
        this.seq = line.seq;
        return;
      }
      if (ended) throw corruptFile(file, lineNo, 'data after the end marker');
      if (line.t === 'end') {
        if (line.lines !== lines) throw corruptFile(file, lineNo, `end marker counts ${line.lines} lines, found ${lines}`);
        ended = true;
        return;
      }
      this.state.applySnapshotLine(line);
    });
    if (scan.completeBytes === 0 && scan.tornBytes === 0) return;
    // Snapshots are renamed into place whole, so a missing end marker means damage, not a crash.
    if (!ended || scan.tornBytes > 0) throw corruptFile(file, lines, 'snapshot is incomplete');
    this.snapshotBytes = scan.completeBytes;
  }

  private async replayJournal(): Promise<void> {
    const file = path.join(this.dir, JOURNAL_FILE);
    const { seq } = await replayJournal<JournalLine>(file, this.seq, (line) => {
      this.state.apply(line, line.op === 'put' || line.op === 'vec' ? line.v : undefined);
    });
    this.seq = seq;
  }
}

function parseLine<T>(buf: Buffer, file: string, lineNo: number): T {
  try {
    return JSON.parse(buf.toString('utf8')) as T;
  } catch (err) {
    throw corruptFile(file, lineNo, (err as Error).message);
  }
}

