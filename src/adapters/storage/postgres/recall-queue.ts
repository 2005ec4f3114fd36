import type { RecallTrace } from '../../../core/outcome-types.js';
import type { RoiEvent, Scope } from '../../../core/types.js';
import type { Logger } from '../../../ports/observability.js';
import { AttemptError, type Db } from './db.js';
import { roiEventValues, trimAfterAppend, trimDue } from './global.js';
import type { PlannerStatistics } from './planner-stats.js';

/** What one recall leaves behind (docs/behavior.md "Recall bookkeeping"). */
export interface BookkeepingEntry {
  scope: Scope;
  /** A counting (POST) recall's reuse bumps and counter; null for a lookup, whose event is all it writes. */
  counted: { reused_ids: string[]; bonus: number; at: string; reused: boolean } | null;
  event: RoiEvent;
  /** The recall's trace (docs/behavior.md "Outcomes"), when it has one. */
  trace: RecallTrace | null;
}

export interface BookkeepingSettings {
  /** Records per batch, and the most ever unwritten at once (queued plus being written). */
  batchMax: number;
  /** How long a record waits for others to join its batch. */
  flushMs: number;
}

/** Pauses before the retries of a batch the database could not take (then it is dropped). */
const RETRY_DELAYS_MS = [100, 500, 2_000, 5_000];

/**
 * One batch in one statement, all or nothing: the reuse bumps summed per pattern (k bumps of
 * `bonus` each are one bump of k × bonus: the cap at 10 gives the same result either way), the
 * recall counters summed per scope, every ROI event in one multi-row insert, in the order
 * the recalls were answered, and every recall trace in another (a trace's pattern keys travel
 * as a JSON array: unnest cannot take an array per row). Rows are locked in key order (patterns, then counters), so two
 * processes' batches may wait for each other but never deadlock. Commits asynchronously, as
 * the one-recall statement did (docs/operations.md): a database crash may lose the last
 * fraction of a second of bookkeeping, never a pattern.
 */
const BATCH_SQL = `WITH bumps AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::float8[], $6::timestamptz[]) AS b(tenant_id, project_id, id, n, bonus, at)
), reuse AS (
  UPDATE patterns SET reuse_count = patterns.reuse_count + locked.n, success_score = LEAST(10, patterns.success_score + locked.bonus), updated_at = locked.at
  FROM (
    SELECT p.tenant_id, p.project_id, p.id, b.n, b.bonus, b.at FROM patterns p
    JOIN bumps b ON p.tenant_id = b.tenant_id AND p.project_id = b.project_id AND p.id = b.id
    ORDER BY p.tenant_id, p.project_id, p.id FOR UPDATE OF p
  ) AS locked
  WHERE patterns.tenant_id = locked.tenant_id AND patterns.project_id = locked.project_id AND patterns.id = locked.id
  RETURNING 1
), counters AS (
  INSERT INTO metrics_counters (tenant_id, project_id, recalls, reusing_recalls)
  SELECT * FROM unnest($7::text[], $8::text[], $9::bigint[], $10::bigint[]) AS c(tenant_id, project_id, recalls, reusing_recalls)
  ORDER BY 1, 2
  ON CONFLICT (tenant_id, project_id) DO UPDATE SET
    recalls = metrics_counters.recalls + EXCLUDED.recalls, reusing_recalls = metrics_counters.reusing_recalls + EXCLUDED.reusing_recalls
  RETURNING 1
), events AS (
  INSERT INTO roi_events (tenant_id, project_id, at, kind, data)
  SELECT tenant_id, project_id, at, kind, data::jsonb
  FROM unnest($11::text[], $12::text[], $13::timestamptz[], $14::text[], $15::text[]) WITH ORDINALITY AS e(tenant_id, project_id, at, kind, data, n)
  ORDER BY n
  RETURNING id, tenant_id, project_id
), traces AS (
  INSERT INTO recall_traces (tenant_id, project_id, recall_id, at, query, query_normalized, query_vector, vector_scale, pattern_keys)
  SELECT tenant_id, project_id, recall_id, at, query, query_normalized, query_vector, vector_scale,
    ARRAY(SELECT jsonb_array_elements_text(keys::jsonb))
  FROM unnest($16::text[], $17::text[], $18::text[], $19::timestamptz[], $20::text[], $21::text[], $22::bytea[], $23::real[], $24::text[])
    AS t(tenant_id, project_id, recall_id, at, query, query_normalized, query_vector, vector_scale, keys)
  ON CONFLICT (tenant_id, project_id, recall_id) DO NOTHING
  RETURNING 1
)
SELECT (SELECT count(*) FROM reuse)::int AS reused_rows, (SELECT count(*) FROM counters)::int AS counter_rows,
  events.id, events.tenant_id, events.project_id
FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit LEFT JOIN events ON true`;

interface BatchRow {
  reused_rows: number;
  id: string | null;
  tenant_id: string | null;
  project_id: string | null;
}

const keyOf = (scope: Scope) => `${scope.tenant_id}\u0000${scope.project_id}`;

/**
 * Recall bookkeeping off the answer's path (docs/behavior.md "Recall bookkeeping"): records
 * queue in memory and are written one batch per statement, a batch every `flushMs` or as soon
 * as `batchMax` records wait, one batch at a time (group commit: the records that arrive while
 * a batch is written form the next). At most `batchMax` records are ever unwritten, so a crash
 * loses at most one batch; a recall that finds the queue full waits for room, which happens
 * only when the database falls a whole batch behind.
 */
export class RecallBookkeeping {
  private queued: BookkeepingEntry[] = [];
  private writing = 0;
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Sequence numbers: records ever added (queued or waiting for room), and records written or given up, in order. */
  private added = 0;
  private done = 0;
  private readonly waiters: { seq: number; resolve: () => void }[] = [];
  /** Records that found the queue full, admitted in order as batches are written. */
  private readonly waitingForRoom: { entry: BookkeepingEntry; admitted: () => void }[] = [];
  /** Unwritten records per scope: all of them, and the counting ones (reads of counts wait for those). */
  private readonly unwritten = new Map<string, { all: number; counted: number }>();
  private closing = false;

  constructor(
    private readonly db: Db,
    private readonly stats: PlannerStatistics,
    private readonly logger: Logger,
    private readonly settings: BookkeepingSettings,
  ) {}

  /**
   * Queues a record; resolves once there was room for it (at once unless the database is a
   * whole batch behind; records waiting for room are admitted in arrival order). The returned
   * `written` resolves when its batch is written or given up.
   */
  add(entry: BookkeepingEntry): Promise<{ written: Promise<void> }> {
    const counts = this.unwritten.get(keyOf(entry.scope)) ?? { all: 0, counted: 0 };
    counts.all++;
    if (entry.counted) counts.counted++;
    this.unwritten.set(keyOf(entry.scope), counts);
    const written = this.reach(++this.added);
    if (this.waitingForRoom.length === 0 && this.queued.length + this.writing < this.settings.batchMax) {
      this.queued.push(entry);
      this.schedule();
      return Promise.resolve({ written });
    }
    return new Promise((resolve) => this.waitingForRoom.push({ entry, admitted: () => resolve({ written }) }));
  }

  /** Whether `scope` has records not yet written: any (`all`), or counting recalls only. */
  pendingIn(scope: Scope, which: 'all' | 'counted'): boolean {
    const counts = this.unwritten.get(keyOf(scope));
    return counts !== undefined && counts[which] > 0;
  }

  /** Waits until every record added so far is written (or given up after its retries). */
  settle(): Promise<void> {
    if (this.added === this.done) return Promise.resolve();
    // A record still waiting for its timer goes now: whoever settles is waiting for it.
    if (!this.flushing) this.startFlush();
    return this.reach(this.added);
  }

  /** Writes what is queued and stops; records added afterwards are still written, at once. */
  async close(): Promise<void> {
    this.closing = true;
    await this.settle();
  }

  private reach(seq: number): Promise<void> {
    if (this.done >= seq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  private schedule(): void {
    if (this.flushing || this.queued.length === 0) return;
    if (this.closing || this.queued.length >= this.settings.batchMax) {
      this.startFlush();
      return;
    }
    // Not unref'd: a process whose last work was a recall (a CLI command, a script) stays up
    // the few milliseconds it takes to write it, even if it never closes the storage.
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.startFlush();
    }, this.settings.flushMs);
  }

  private startFlush(): void {
    if (this.flushing || this.queued.length === 0) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.queued.splice(0, this.settings.batchMax);
    this.writing = batch.length;
    this.flushing = this.writeWithRetries(batch).finally(() => this.finished(batch));
  }

  private finished(batch: BookkeepingEntry[]): void {
    this.writing = 0;
    this.flushing = null;
    this.done += batch.length;
    for (const entry of batch) {
      const key = keyOf(entry.scope);
      const counts = this.unwritten.get(key)!;
      counts.all--;
      if (entry.counted) counts.counted--;
      if (counts.all === 0) this.unwritten.delete(key);
    }
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i].seq <= this.done) {
        this.waiters[i].resolve();
        this.waiters.splice(i, 1);
      }
    }
    while (this.waitingForRoom.length > 0 && this.queued.length + this.writing < this.settings.batchMax) {
      const next = this.waitingForRoom.shift()!;
      this.queued.push(next.entry);
      next.admitted();
    }
    this.schedule();
  }

  /**
   * A batch the database refused or never received is tried again a few times, then dropped
   * and logged; one whose connection broke mid-statement is not repeated (it may have been
   * written: repeating it could count it twice). Never throws: no bookkeeping fault ends the
   * process or fails a recall.
   */
  private async writeWithRetries(batch: BookkeepingEntry[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.write(batch);
        return;
      } catch (err) {
        const repeatable = err instanceof AttemptError && err.repeatable;
        const cause = err instanceof AttemptError ? err.cause : err;
        if (!repeatable || attempt >= RETRY_DELAYS_MS.length) {
          this.logger.error(
            { err: cause, records: batch.length, attempts: attempt + 1 },
            repeatable
              ? 'recall bookkeeping lost: the database did not take this batch of reuse counts, recall counters and ROI events'
              : 'recall bookkeeping may be lost: the connection broke while this batch was written, so it is not repeated',
          );
          return;
        }
        this.logger.warn({ err: (cause as Error)?.message, records: batch.length, attempt: attempt + 1 }, 'writing recall bookkeeping failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]));
      }
    }
  }

  private async write(batch: BookkeepingEntry[]): Promise<void> {
    const res = await this.db.attempt<BatchRow>(BATCH_SQL, batchParams(batch), 'recall.bookkeeping', true);
    this.stats.noteWrites(res.rows[0]?.reused_rows ?? 0);
    // About one event in TRIM_EVERY trims its scope (global.ts); once per scope per batch is enough.
    const due = new Map<string, { scope: Scope; id: string }>();
    for (const row of res.rows) {
      if (row.id === null || !trimDue(row.id)) continue;
      const scope = { tenant_id: row.tenant_id!, project_id: row.project_id! };
      due.set(keyOf(scope), { scope, id: row.id });
    }
    for (const { scope, id } of due.values()) await trimAfterAppend(this.db, this.logger, scope, id);
  }
}

/** The batch as column arrays: bumps summed per pattern, counters per scope, events and traces in order. */
function batchParams(batch: BookkeepingEntry[]): unknown[] {
  const bumps = new Map<string, { scope: Scope; id: string; n: number; bonus: number; at: string }>();
  const counters = new Map<string, { scope: Scope; recalls: number; reusing: number }>();
  for (const { scope, counted } of batch) {
    if (!counted) continue;
    const key = keyOf(scope);
    const c = counters.get(key) ?? { scope, recalls: 0, reusing: 0 };
    c.recalls++;
    if (counted.reused) c.reusing++;
    counters.set(key, c);
    // A pattern listed twice in one recall is bumped once, as before.
    for (const id of new Set(counted.reused_ids)) {
      const bumpKey = `${key}\u0000${id}`;
      const b = bumps.get(bumpKey) ?? { scope, id, n: 0, bonus: 0, at: counted.at };
      b.n++;
      b.bonus += counted.bonus;
      if (Date.parse(counted.at) >= Date.parse(b.at)) b.at = counted.at;
      bumps.set(bumpKey, b);
    }
  }
  const b = [...bumps.values()];
  const c = [...counters.values()];
  const events = batch.map((e) => [e.scope, roiEventValues(e.event)] as const);
  const traces = batch.flatMap(({ scope, trace }) => (trace ? [{ scope, t: trace }] : []));
  const vectorBytes = (t: RecallTrace) => {
    const v = t.query_vector;
    return v ? Buffer.from(v.values.buffer, v.values.byteOffset, v.values.byteLength) : null;
  };
  return [
    b.map((x) => x.scope.tenant_id), b.map((x) => x.scope.project_id), b.map((x) => x.id), b.map((x) => x.n), b.map((x) => x.bonus), b.map((x) => x.at),
    c.map((x) => x.scope.tenant_id), c.map((x) => x.scope.project_id), c.map((x) => x.recalls), c.map((x) => x.reusing),
    events.map(([s]) => s.tenant_id), events.map(([s]) => s.project_id), events.map(([, v]) => v[0]), events.map(([, v]) => v[1]), events.map(([, v]) => v[2]),
    traces.map((x) => x.scope.tenant_id), traces.map((x) => x.scope.project_id), traces.map((x) => x.t.recall_id), traces.map((x) => x.t.at),
    traces.map((x) => x.t.query), traces.map((x) => x.t.query_normalized), traces.map((x) => vectorBytes(x.t)),
    traces.map((x) => x.t.query_vector?.scale ?? null), traces.map((x) => JSON.stringify(x.t.pattern_keys)),
  ];
}
