import { open, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { fsyncDir, writeAll } from './fs-durable.js';

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * An append-only file of JSON lines with group commit: `append` queues a line and resolves
 * once it is on disk (write + fdatasync). Lines queued while a flush is running go out
 * together in the next write, so concurrent writers share one fsync and lines never
 * interleave. A failed write (disk full, I/O error) rejects every queued line and cuts the
 * file back to its last durable size, so the log stays usable and writes resume by themselves
 * once the cause is gone. Only if that cut fails too is the tail unknown: the
 * log then refuses further appends (the owner must reopen it, which replays and trims).
 */
export class AppendLog {
  private queue: Buffer[] = [];
  private waiters: Waiter[] = [];
  private draining = false;
  private idle: Promise<void> = Promise.resolve();
  private markIdle: () => void = () => undefined;
  private failure: Error | null = null;
  private closed = false;
  /**
   * Called synchronously when a write fails, before any waiter hears of it: the owner can
   * stop further mutations at once (its memory holds lines that never became durable).
   */
  onWriteFailure: ((err: Error) => void) | null = null;

  private constructor(
    readonly file: string,
    private readonly fh: FileHandle,
    private size: number,
  ) {}

  static async open(file: string): Promise<AppendLog> {
    let existed = true;
    try {
      await stat(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      existed = false;
    }
    const fh = await open(file, 'a');
    if (!existed) await fsyncDir(path.dirname(file));
    const { size } = await fh.stat();
    return new AppendLog(file, fh, size);
  }

  /** Bytes in the file, counting only lines already on disk. */
  get bytes(): number {
    return this.size;
  }

  /** The error that broke the log, if any. */
  get error(): Error | null {
    return this.failure;
  }

  /** Queues one line (without its newline); resolves when it is durable. */
  append(line: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error(`${this.file} is closed`));
    this.queue.push(Buffer.from(`${line}\n`, 'utf8'));
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.draining) this.drain();
    return done;
  }

  /** Resolves once every line queued so far is durable (or has failed). */
  flush(): Promise<void> {
    return this.draining ? this.idle : Promise.resolve();
  }

  /** Empties the file. Only call with nothing queued (see ScopeStore compaction). */
  async truncate(): Promise<void> {
    await this.flush();
    if (this.queue.length > 0) throw new Error('truncate with queued lines');
    try {
      await this.fh.truncate(0);
      await this.fh.datasync();
      this.size = 0;
    } catch (err) {
      this.failure ??= err as Error;
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    await this.fh.close();
  }

  /** Drops whatever part of a failed write reached the file; sticky failure if even that fails. */
  private async cutBackToDurable(cause: Error): Promise<void> {
    try {
      await this.fh.truncate(this.size);
      await this.fh.datasync();
    } catch {
      this.failure = cause;
    }
  }

  private drain(): void {
    this.draining = true;
    this.idle = new Promise<void>((resolve) => (this.markIdle = resolve));
    void this.drainLoop();
  }

  private async drainLoop(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        const waiters = this.waiters;
        this.queue = [];
        this.waiters = [];
        const buf = batch.length === 1 ? batch[0] : Buffer.concat(batch);
        try {
          await writeAll(this.fh, buf);
          await this.fh.datasync();
          this.size += buf.length;
        } catch (err) {
          const failure = err instanceof Error ? err : new Error(String(err));
          this.onWriteFailure?.(failure);
          const rejected = [...waiters, ...this.waiters];
          this.queue = [];
          this.waiters = [];
          await this.cutBackToDurable(failure);
          for (const w of rejected) w.reject(failure);
          return;
        }
        for (const w of waiters) w.resolve();
      }
    } finally {
      // Synchronous with the loop's last emptiness check: no append can slip in between.
      this.draining = false;
      this.markIdle();
    }
  }
}
