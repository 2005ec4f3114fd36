import { open } from 'node:fs/promises';
import path from 'node:path';
import type { AuditEvent } from '../../../core/types.js';
import { AppendLog } from './durable/append-log.js';
import { atomicWriteFile, scanLines } from './durable/fs-durable.js';

export const AUDIT_FILE = 'audit.ndjson';

/**
 * Cuts an unterminated tail left by a crash, so the next append starts on its own line.
 * Reads backwards from the end: the file is append-only and may be large.
 */
async function trimTornTail(file: string): Promise<void> {
  let fh;
  try {
    fh = await open(file, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    const { size } = await fh.stat();
    const chunk = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await fh.read(chunk, 0, end - start, start);
      const nl = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (nl >= 0) {
        end = start + nl + 1;
        break;
      }
      end = start;
    }
    if (end < size) {
      await fh.truncate(end);
      await fh.sync();
    }
  } finally {
    await fh.close();
  }
}

/** The global, append-only audit trail (one JSON line per event, durable before acknowledged). */
export class AuditLog {
  private log: AppendLog | null = null;
  private opening: Promise<AppendLog> | null = null;
  private readonly file: string;

  constructor(dataPath: string) {
    this.file = path.join(dataPath, AUDIT_FILE);
  }

  async init(): Promise<void> {
    await trimTornTail(this.file);
  }

  /** Set while scrub rewrites the file: appends wait for it. */
  private rewriting: Promise<unknown> | null = null;

  async append(event: AuditEvent): Promise<void> {
    while (this.rewriting) await this.rewriting.catch(() => undefined);
    this.opening ??= AppendLog.open(this.file).then(
      (log) => (this.log = log),
      (err: unknown) => {
        this.opening = null; // let a later append retry
        throw err;
      },
    );
    const log = await this.opening;
    await log.append(JSON.stringify(event));
  }

  /** Newest first. Scans the file (an operator/test path, not a hot one) keeping only `limit`. */
  async list(filter: { tenant_id?: string; kind?: string; limit: number }): Promise<AuditEvent[]> {
    const limit = Math.floor(filter.limit);
    if (!(limit > 0)) return [];
    const kept: AuditEvent[] = [];
    await scanLines(this.file, (buf) => {
      let event: AuditEvent;
      try {
        event = JSON.parse(buf.toString('utf8')) as AuditEvent;
      } catch {
        return; // a damaged line must not hide the rest of the trail
      }
      if (filter.tenant_id !== undefined && event.tenant_id !== filter.tenant_id) return;
      if (filter.kind !== undefined && event.kind !== filter.kind) return;
      kept.push(event);
      if (kept.length > limit * 2) kept.splice(0, kept.length - limit);
    });
    return kept.slice(-limit).reverse();
  }

  /**
   * Governance deletion: events for which `match` holds keep kind, time, scope and actor but
   * lose detail and ip. The file is rewritten atomically (temp + fsync + rename), so a crash
   * leaves the old or the scrubbed trail; replaying a scrub changes nothing more.
   */
  async scrub(match: (event: AuditEvent) => boolean): Promise<number> {
    while (this.rewriting) await this.rewriting.catch(() => undefined);
    const run = this.rewrite(match);
    this.rewriting = run;
    try {
      return await run;
    } finally {
      this.rewriting = null;
    }
  }

  private async rewrite(match: (event: AuditEvent) => boolean): Promise<number> {
    // Appends already queued reach the file before it is read.
    if (this.opening) await this.opening.catch(() => undefined);
    await this.log?.close();
    this.log = null;
    this.opening = null;
    const lines: string[] = [];
    let scrubbed = 0;
    await scanLines(this.file, (buf) => {
      const text = buf.toString('utf8');
      let event: AuditEvent;
      try {
        event = JSON.parse(text) as AuditEvent;
      } catch {
        lines.push(`${text}\n`); // kept as it was: scrubbing must not lose the rest of the trail
        return;
      }
      if (match(event) && (Object.keys(event.detail ?? {}).length > 0 || event.ip !== null)) {
        scrubbed++;
        lines.push(`${JSON.stringify({ ...event, ip: null, detail: {} })}\n`);
      } else {
        lines.push(`${text}\n`);
      }
    });
    if (scrubbed > 0) await atomicWriteFile(this.file, lines);
    return scrubbed;
  }

  get error(): Error | null {
    return this.log?.error ?? null;
  }

  async close(): Promise<void> {
    if (this.opening) await this.opening.catch(() => undefined);
    await this.log?.close();
  }
}
