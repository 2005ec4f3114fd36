import type { Logger } from '../../../ports/observability.js';
import type { Db } from './db.js';

/** autovacuum's default analyze rule: 50 rows plus 10% of the table changed since the last ANALYZE. */
const BASE_THRESHOLD = 50;
const SCALE_FACTOR = 0.1;

function thresholdFor(reltuples: number): number {
  return BASE_THRESHOLD + SCALE_FACTOR * Math.max(0, reltuples);
}

/**
 * The tables analyzed together: recall_postings (migration 0008) is written by triggers in the
 * same statements as patterns, ten or so rows per pattern, so it goes stale with it.
 */
const TABLES = ['patterns', 'recall_postings'];

/**
 * Keeps the planner's statistics on `patterns` (and recall_postings) current, whether or not autovacuum runs.
 *
 * Why: vector search is fast only while the planner knows how many rows a scope holds. A
 * table filled since its last ANALYZE looks nearly empty to the planner, which then reads
 * and sorts the whole scope instead of walking the HNSW index (about 300 ms instead of 2 ms
 * at 100k patterns). autovacuum repairs that within a minute when it is on; servers do run
 * with it off, and right after a bulk load a minute is long. So this process counts its own
 * writes to patterns and, once they pass autovacuum's own threshold, runs ANALYZE in the
 * background. At start it looks at the server's counters too, because another process or a
 * bulk load may have changed the table meanwhile.
 *
 * ANALYZE takes a lock that neither reads nor writes wait for; two processes analyzing at once
 * merely queue. It needs the table's owner (the role that ran the migrations); under another
 * role PostgreSQL skips it with a warning and the planner keeps the statistics it had.
 */
export class PlannerStatistics {
  private changed = 0;
  private threshold = BASE_THRESHOLD;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
  ) {}

  /** Checks the server's counters once, in the background, and analyzes a stale table. */
  start(): void {
    this.run(async () => {
      const { reltuples, modified, staleTable } = await this.readCounters();
      this.threshold = thresholdFor(reltuples);
      this.changed = modified;
      if (modified >= this.threshold || staleTable) await this.analyze();
    });
  }

  /** Counts rows this process inserted, updated or deleted; may start a background ANALYZE. */
  noteWrites(rows: number): void {
    if (rows <= 0) return;
    this.changed += rows;
    if (this.changed >= this.threshold) this.run(() => this.analyze());
  }

  /** Waits for a running ANALYZE, then starts no more. */
  async close(): Promise<void> {
    this.closed = true;
    await this.running;
  }

  private run(task: () => Promise<void>): void {
    if (this.running || this.closed) return;
    this.running = task()
      .catch((err: unknown) => {
        // Only the planner's estimates are at stake: the next writes will try again.
        this.logger.warn({ err: (err as Error).message }, 'refreshing planner statistics of patterns failed');
      })
      .finally(() => {
        this.running = null;
      });
  }

  private async analyze(): Promise<void> {
    this.changed = 0;
    await this.db.query(`ANALYZE ${TABLES.join(', ')}`, [], 'patterns.analyze');
    const { reltuples } = await this.readCounters();
    this.threshold = thresholdFor(reltuples);
  }

  /**
   * patterns' size and changes since its last ANALYZE, and whether any table analyzed with it
   * has changed past the threshold of its own size (a migration's backfill, a bulk load).
   */
  private async readCounters(): Promise<{ reltuples: number; modified: number; staleTable: boolean }> {
    // '…'::regclass follows search_path, so a schema-per-tenant deployment sees its own tables.
    const res = await this.db.query<{ name: string; reltuples: number; modified: string | null }>(
      `SELECT t.name, c.reltuples::float8 AS reltuples, s.n_mod_since_analyze AS modified
       FROM unnest($1::text[]) AS t(name)
       JOIN pg_class c ON c.oid = t.name::regclass
       LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid`,
      [TABLES],
      'patterns.statistics',
    );
    const counters = (name: string) => {
      const row = res.rows.find((r) => r.name === name);
      return { reltuples: row?.reltuples ?? 0, modified: Number(row?.modified ?? 0) };
    };
    const staleTable = TABLES.slice(1).some((name) => {
      const { reltuples, modified } = counters(name);
      return modified >= thresholdFor(reltuples);
    });
    return { ...counters('patterns'), staleTable };
  }
}
