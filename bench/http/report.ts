import type { LoadResult } from './load.js';
import type { ScaleFigures } from './pg-copy.js';

/** One load run with where it ran and what the server spent on it. */
export interface HttpRow extends LoadResult {
  /** Which build served ('this', or the folder of a --compare build). */
  build: string;
  storage: string;
  size: number;
  workers: number;
  /** Server CPU (all its processes) per answered request, in milliseconds. */
  cpuMsPerRequest: number;
  /** PostgreSQL backends' CPU per request, in milliseconds (null: not PostgreSQL). */
  pgCpuMsPerRequest: number | null;
  /** PostgreSQL transactions (statements outside BEGIN count one each) per request. */
  pgTransactionsPerRequest: number | null;
  /** Resident memory of the serving processes after the run, in MB. */
  rssMb: number;
  /** req/s of GET /v1/version at the same storage, size and connections (null: not measured). */
  versionPerSecond: number | null;
}

/**
 * A run's row: the load's result and what the server (`cpuSeconds`, all its processes) and
 * PostgreSQL's backends (`pg`, null when not PostgreSQL) spent on it, per answered request.
 */
export function measuredRow(
  result: LoadResult,
  where: Pick<HttpRow, 'build' | 'storage' | 'size' | 'workers' | 'versionPerSecond'>,
  spent: { cpuSeconds: number; pg: { cpuSeconds: number; transactions: number } | null; rssBytes: number },
): HttpRow {
  const perRequest = (n: number) => (result.requests > 0 ? n / result.requests : Number.NaN);
  return {
    ...result,
    ...where,
    cpuMsPerRequest: perRequest(spent.cpuSeconds * 1000),
    pgCpuMsPerRequest: spent.pg ? perRequest(spent.pg.cpuSeconds * 1000) : null,
    pgTransactionsPerRequest: spent.pg ? perRequest(spent.pg.transactions) : null,
    rssMb: spent.rssBytes / 1e6,
  };
}

const HEADER = ['build', 'storage', 'size', 'workers', 'conns', 'scenario', 'req/s', 'x version', 'p50 ms', 'p95 ms', 'p99 ms', 'non-2xx', 'errors', 'cpu ms/req', 'pg ms/req', 'pg tx/req', 'rss MB'];

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

export function rowCells(r: HttpRow): string[] {
  return [
    r.build, r.storage, r.size.toLocaleString('en-US'), String(r.workers), String(r.connections), r.scenario,
    Math.round(r.perSecond).toLocaleString('en-US'),
    r.versionPerSecond ? fixed(r.perSecond / r.versionPerSecond, 3) : '-',
    fixed(r.p50, 1), fixed(r.p95, 1), fixed(r.p99, 1), String(r.non2xx), String(r.errors), fixed(r.cpuMsPerRequest, 2),
    r.pgCpuMsPerRequest === null ? '-' : fixed(r.pgCpuMsPerRequest, 2),
    r.pgTransactionsPerRequest === null ? '-' : fixed(r.pgTransactionsPerRequest, 2),
    fixed(r.rssMb, 0),
  ];
}

/** A plain-text table with right-aligned numbers. */
export function httpTable(rows: HttpRow[]): string {
  const cells = [HEADER, ...rows.map(rowCells)];
  const widths = HEADER.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  const line = (c: string[]) => c.map((v, i) => (i < 3 || i === 5 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  return [line(HEADER), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join('\n');
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

/** The PostgreSQL fills: COPY and HNSW build times, sizes, and the search's recall@10 against an exact scan. */
export function scaleTable(figures: ScaleFigures[]): string {
  const header = ['size', 'COPY s', 'HNSW build s', 'table', 'HNSW index', 'table+indexes+TOAST', 'ef_search', 'recall@10 vs exact', 'mean gap@10', 'ms/query'];
  const cells = [header];
  for (const f of figures) {
    for (const r of f.recall) {
      cells.push([
        f.size.toLocaleString('en-US'), f.copySeconds.toFixed(1), f.indexSeconds.toFixed(1), mb(f.tableBytes), mb(f.indexBytes),
        mb(f.totalBytes), String(r.efSearch), `${r.recallAt10.toFixed(3)} (${f.recallQueries} queries)`, r.meanGapAt10.toFixed(4), r.msPerQuery.toFixed(2),
      ]);
    }
  }
  const widths = header.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  return cells.map((c) => c.map((v, i) => v.padStart(widths[i])).join('  ')).join('\n');
}
