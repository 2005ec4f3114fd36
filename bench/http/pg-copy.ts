import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { getPriority, setPriority } from 'node:os';
import pg from 'pg';
import { buildSearchStatement, SEARCH_SESSION_SQL } from '../../src/adapters/storage/postgres/search.js';
import { newId } from '../../src/services/ids.js';
import { createDots, wasm } from '../../src/adapters/storage/json/engine/dot-kernel.js';
import { syntheticQueries, syntheticRunStream, type TaskSource } from '../synthetic.js';
import { DEV_SCOPE, openEmbedder } from './fill.js';

/** What filling a PostgreSQL store at scale cost, and how good its HNSW search is. */
export interface ScaleFigures {
  size: number;
  copySeconds: number;
  /** The HNSW index build (the vector search's). */
  indexSeconds: number;
  tableBytes: number;
  indexBytes: number;
  totalBytes: number;
  /** The service's HNSW search against the exact top 10 (full-precision cosine over every row), per ef_search. */
  recall: RecallAtEf[];
  recallQueries: number;
}

export interface RecallAtEf {
  efSearch: number;
  /** Share of the exact top 10 the search returns. */
  recallAt10: number;
  /** Mean of (true 10th similarity − returned 10th similarity): near 0 when the misses are near-ties. */
  meanGapAt10: number;
  /** Wall time per query from the benchmark's connection. */
  msPerQuery: number;
}

/** ef_search values measured: pgvector's default 40 (the service's, for k <= 40), then wider. */
const EF_SEARCH = [40, 100, 200, 400];

const RECALL_QUERIES = 200;
/** Tasks embedded per step of the fill. */
const EMBED_CHUNK = 4_096;
/** Niceness of the backends that build the indexes (at least the benchmark's own). */
const BUILD_NICENESS = 10;
/**
 * Memory for the index builds: pgvector builds the HNSW graph in memory when it fits (a
 * million 384-d half-precision vectors and their neighbour lists take about 2 GB) and falls
 * back to a far slower on-disk insert of each remaining row when it does not.
 */
const BUILD_MEMORY = '6GB';
/** One parallel worker beside the leader: the machine has two cores. */
const BUILD_WORKERS = 1;
/** How often the parallel workers of a build are looked for (to lower their priority too). */
const NICE_POLL_MS = 500;
const TOP = 10;
/** Rows per block of the exact scan that runs alongside the fill. */
const BLOCK_ROWS = 1024;
const PAGE_BYTES = 65536;
const PATTERN_COLUMNS = 'tenant_id, project_id, id, task, code, output, eval_score, success_score, reuse_count, classification, source, redacted, created_at, updated_at, dim, embedding';

/** COPY text format: backslash, tab, newline and carriage return escaped. */
function copyText(value: string): string {
  return value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** `COPY … FROM STDIN` through psql (node-postgres has no COPY of its own), fed by `rows`. */
async function copyIn(url: string, sql: string, rows: () => AsyncIterable<string> | Iterable<string>): Promise<void> {
  const psql = spawn('psql', [url, '-v', 'ON_ERROR_STOP=1', '-q', '-c', sql], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  psql.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
  const exited = once(psql, 'exit');
  const failedToStart = once(psql, 'error').then(([err]) => { throw new Error(`psql is needed for the COPY fill: ${(err as Error).message}`); });
  const write = async () => {
    let chunk = '';
    for await (const row of rows()) {
      chunk += row;
      if (chunk.length >= 1 << 20) {
        if (!psql.stdin.write(chunk)) await once(psql.stdin, 'drain');
        chunk = '';
      }
    }
    psql.stdin.end(chunk);
    const [code] = await exited;
    if (code !== 0) throw new Error(`COPY failed (psql exit ${code}): ${stderr.trim()}`);
  };
  await Promise.race([write(), failedToStart]);
}

/**
 * Exact top 10 per query by full-precision cosine, fed block by block as the rows are made
 * (the SIMD float kernel of the JSON store, one call per query and block).
 */
class ExactTop {
  private readonly memory;
  private readonly floats: Float32Array;
  private readonly dots;
  private readonly stride: number;
  private readonly blockAt: number;
  private readonly scoresAt: number;
  private inBlock = 0;
  private rowBase = 0;
  readonly best: { score: number; row: number }[][];

  constructor(private readonly queries: Float32Array[]) {
    const dim = queries[0].length;
    this.stride = Math.ceil(dim / 8) * 8;
    this.blockAt = queries.length * this.stride;
    this.scoresAt = this.blockAt + BLOCK_ROWS * this.stride;
    const bytes = (this.scoresAt + BLOCK_ROWS) * 4;
    this.memory = new wasm.Memory({ initial: Math.ceil(bytes / PAGE_BYTES) });
    this.floats = new Float32Array(this.memory.buffer);
    queries.forEach((q, i) => this.floats.set(q, i * this.stride));
    this.dots = createDots(this.memory);
    this.best = queries.map(() => []);
  }

  add(v: Float32Array): void {
    this.floats.set(v, this.blockAt + this.inBlock * this.stride);
    if (++this.inBlock === BLOCK_ROWS) this.flush();
  }

  flush(): void {
    const n = this.inBlock;
    if (n === 0) return;
    const scores = this.floats.subarray(this.scoresAt, this.scoresAt + n);
    for (let q = 0; q < this.queries.length; q++) {
      this.dots(q * this.stride * 4, this.blockAt * 4, n, this.stride * 4, this.scoresAt * 4);
      const top = this.best[q];
      for (let r = 0; r < n; r++) {
        const score = scores[r];
        if (top.length === TOP && score <= top[TOP - 1].score) continue;
        top.push({ score, row: this.rowBase + r });
        top.sort((a, b) => b.score - a.score);
        if (top.length > TOP) top.pop();
      }
    }
    this.rowBase += n;
    this.inBlock = 0;
  }
}

/**
 * Keeps the index build's backend and its parallel workers (which come and go per CREATE
 * INDEX) at BUILD_NICENESS, polling pg_stat_activity from a connection of its own.
 */
async function buildNicer(url: string, leader: number, log: (m: string) => void): Promise<{ stop(): Promise<void> }> {
  const watcher = new pg.Client({ connectionString: url });
  await watcher.connect();
  const niceness = Math.max(getPriority(), BUILD_NICENESS);
  const done = new Set<number>();
  let warned = false;
  const nice = (pid: number) => {
    if (done.has(pid)) return;
    try {
      setPriority(pid, niceness);
      done.add(pid);
    } catch {
      if (!warned) log('  (could not lower the index build backends\' priority; they run at PostgreSQL\'s)');
      warned = true;
      done.add(pid);
    }
  };
  nice(leader);
  let polling: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    polling = polling.then(async () => {
      const workers = await watcher.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE leader_pid = $1 AND pid <> $1', [leader]);
      for (const { pid } of workers.rows) nice(pid);
    }).catch(() => undefined);
  }, NICE_POLL_MS);
  return {
    async stop() {
      clearInterval(timer);
      await polling;
      await watcher.end();
    },
  };
}

/**
 * Fills a migrated, empty PostgreSQL database with `size` synthetic patterns and their first
 * eval by COPY, with the HNSW indexes dropped first and rebuilt after (timed), as one would
 * load a large store; then measures the service's own search statement against an exact scan.
 */
export async function copyFill(
  url: string, size: number, modelPath: string, seed: number, log: (m: string) => void, taskFrom: TaskSource,
): Promise<ScaleFigures> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // The HNSW graph is far cheaper to build once over the filled table than to maintain row by
    // row; the migration's own definition is re-created verbatim. (The keyword postings are
    // written by the insert trigger, once per COPY statement: their time is in the COPY's.)
    const indexes = (await client.query<{ name: string; def: string }>(
      "SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'patterns' AND indexdef ILIKE '%USING hnsw%'",
    )).rows;
    for (const index of indexes) await client.query(`DROP INDEX "${index.name}"`);
    // The per-row count trigger would update one counter row a million times in one
    // transaction; the count is set once after the COPY instead.
    await client.query('ALTER TABLE patterns DISABLE TRIGGER pattern_counts_track');

    // Every stored task gets its real embedding (the static model does 100k in well under a
    // minute): a graph index's recall depends on how the vectors spread, and noisy copies of a
    // few bases (what the other fills use) are the hardest case for it, unlike real tasks.
    const runs = syntheticRunStream(seed, taskFrom);
    const embedder = await openEmbedder(modelPath);
    const queries = await embedder.embed(syntheticQueries(seed + 7, RECALL_QUERIES, new Set(), taskFrom));
    const exact = new ExactTop(queries);
    const ids: string[] = new Array<string>(size);
    const scores = new Float32Array(size);
    const started = performance.now();
    const at = new Date().toISOString();
    try {
      await copyIn(url, `COPY patterns (${PATTERN_COLUMNS}) FROM STDIN`, async function* () {
        for (let offset = 0; offset < size; offset += EMBED_CHUNK) {
          const batch = Array.from({ length: Math.min(EMBED_CHUNK, size - offset) }, () => runs.next().value!);
          const vectors = await embedder.embed(batch.map((r) => r.task));
          for (let j = 0; j < batch.length; j++) {
            const i = offset + j;
            const [run, v] = [batch[j], vectors[j]];
            exact.add(v);
            ids[i] = newId(new Date());
            scores[i] = run.eval_score;
            yield `${DEV_SCOPE.tenant_id}\t${DEV_SCOPE.project_id}\t${ids[i]}\t${copyText(run.task)}\t${copyText(run.code)}\t${copyText(run.output)}\t${run.eval_score}\t${run.eval_score}\t0\tinternal\tapi\tf\t${at}\t${at}\t${v.length}\t[${Array.prototype.join.call(v, ',')}]\n`;
          }
          if (Math.floor((offset + batch.length) / 100_000) > Math.floor(offset / 100_000)) log(`  copied ${(offset + batch.length).toLocaleString('en-US')} rows`);
        }
      });
    } finally {
      await embedder.close();
    }
    exact.flush();
    await copyIn(url, 'COPY eval_observations (tenant_id, project_id, pattern_id, score, at) FROM STDIN', function* () {
      for (let i = 0; i < size; i++) yield `${DEV_SCOPE.tenant_id}\t${DEV_SCOPE.project_id}\t${ids[i]}\t${scores[i]}\t${at}\n`;
    });
    await client.query('ALTER TABLE patterns ENABLE TRIGGER pattern_counts_track');
    await client.query(
      `INSERT INTO pattern_counts (tenant_id, project_id, n) SELECT tenant_id, project_id, count(*) FROM patterns GROUP BY 1, 2
       ON CONFLICT (tenant_id, project_id) DO UPDATE SET n = EXCLUDED.n`,
    );
    const copySeconds = (performance.now() - started) / 1000;
    log(`  COPY of ${size.toLocaleString('en-US')} patterns and evals: ${copySeconds.toFixed(1)} s; building the HNSW index`);

    await client.query(`SET maintenance_work_mem = '${BUILD_MEMORY}'`);
    await client.query(`SET max_parallel_maintenance_workers = ${BUILD_WORKERS}`);
    // The builds run in this session's backend and its parallel workers: lower their priority
    // as the benchmark's own is (the machine is shared; the README's figures say so). Only root
    // or the backends' owner may.
    const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const niceBuild = await buildNicer(url, backend, log);
    let indexSeconds = 0;
    try {
      for (const index of indexes) {
        const indexStarted = performance.now();
        await client.query(index.def);
        const seconds = (performance.now() - indexStarted) / 1000;
        log(`  ${index.name}: ${seconds.toFixed(1)} s`);
        indexSeconds += seconds;
      }
    } finally {
      await niceBuild.stop();
    }
    // The filled tables as autovacuum leaves insert-only tables in a running deployment:
    // all-visible (index-only scans skip the heap) and analyzed. Left to autovacuum, its
    // workers would run during the first measured runs (at 1M for minutes) and count as
    // PostgreSQL's CPU per request.
    await client.query('VACUUM (ANALYZE) patterns, eval_observations, recall_postings');
    const sizes = (await client.query<{ table: string; index: string; total: string }>(
      "SELECT pg_relation_size('patterns')::text AS table, pg_relation_size('patterns_embedding_384_hnsw')::text AS index, pg_total_relation_size('patterns')::text AS total",
    )).rows[0];

    // The service's search (same statement, same session setting) against the exact top 10,
    // at pgvector's default candidate list (what the service uses for k <= 40) and wider ones.
    await client.query(SEARCH_SESSION_SQL);
    const recall: RecallAtEf[] = [];
    for (const ef of EF_SEARCH) {
      await client.query(`SET hnsw.ef_search = ${ef}`);
      let found = 0;
      let gap = 0;
      const started = performance.now();
      for (let q = 0; q < queries.length; q++) {
        const stmt = buildSearchStatement(DEV_SCOPE, queries[q], TOP, undefined, { columns: 'id', evalWindow: 0 });
        const res = await client.query<{ id: string; distance: number }>(stmt.sql, stmt.params);
        const got = new Set(res.rows.map((r) => r.id));
        const truth = exact.best[q];
        found += truth.filter((b) => got.has(ids[b.row])).length;
        // How much worse the 10th returned match is than the true 10th (0: a miss was a tie).
        const lastReturned = res.rows.length > 0 ? 1 - res.rows[res.rows.length - 1].distance : 0;
        gap += Math.max(0, truth[truth.length - 1].score - lastReturned);
      }
      recall.push({
        efSearch: ef, recallAt10: found / (queries.length * TOP), meanGapAt10: gap / queries.length,
        msPerQuery: (performance.now() - started) / queries.length,
      });
    }
    return {
      size, copySeconds, indexSeconds,
      tableBytes: Number(sizes.table), indexBytes: Number(sizes.index), totalBytes: Number(sizes.total),
      recall, recallQueries: queries.length,
    };
  } finally {
    await client.end();
  }
}
